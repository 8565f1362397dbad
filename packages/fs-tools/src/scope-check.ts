import { isStrictlyInside } from "@insomnia/safe-read";
import type { PermissionExplanation, Scope, ScopeRuleRef } from "@insomnia/scope";
import * as path from "node:path";
import { FsToolsError } from "./fs-tools-error.ts";

/** What a call needs at a path. */
export type Need = "read" | "write";

/** A name no directory entry can have (over NAME_MAX), so asking about it asks about "any child". */
const ANY_CHILD = "x".repeat(256);

/** The absolute form of a tool's `path` input: relative paths are below the pod's pwd (`scope.base`). `..` is left for the scope to resolve after symlinks. */
export function absoluteInput(scope: Scope, input: string): string {
  return path.isAbsolute(input) ? input : input === "" || input === "." ? scope.base : `${scope.base}/${input}`;
}

/**
 * Checks that `target` (absolute) allows `need`, and returns its canonical path; otherwise
 * throws the refusal the model reads, naming the path and the rule. `asked` is the path as
 * the model wrote it, shown when it differs. `resolved`: `target` was read back from an open
 * descriptor (or built from one plus a plain name) and is matched as it is, never resolved again.
 */
export function requirePermission(
  scope: Scope,
  tool: string,
  asked: string,
  target: string,
  need: Need,
  resolved = false,
): string {
  const explanation = scope.explain(target, { resolved });
  if (explanation.path === undefined) {
    throw new FsToolsError(
      "OUTSIDE_SCOPE",
      `${tool} refused ${JSON.stringify(asked)}: the path cannot be resolved (a symlink loop, or a component that cannot be read); nothing was accessed`,
      { tool, path: target },
    );
  }
  if (granted(explanation, need)) return explanation.path;
  throw refusal(scope, tool, asked, explanation);
}

/**
 * The same check for a directory whose entries a listing reveals: the directory's children
 * must be readable too (a non-recursive rule covers its target's direct children, not theirs).
 * Returns the directory's canonical path.
 */
export function requireListable(scope: Scope, tool: string, asked: string, dir: string, resolved = false): string {
  const canonical = requirePermission(scope, tool, asked, dir, "read", resolved);
  const child = scope.explain(path.join(canonical, ANY_CHILD), { resolved: true });
  if (granted(child, "read")) return canonical;
  const why =
    child.deny !== undefined
      ? `its entries are denied by ${describeRule(child.deny)}`
      : `the rule that covers it is non-recursive (it covers ${nonRecursiveRuleAbove(scope, canonical) ?? "its target"} and that directory's direct children only, not the entries of ${canonical})`;
  throw new FsToolsError("OUTSIDE_SCOPE", `${tool} refused ${shown(asked, canonical)}: ${why}; nothing was listed`, {
    tool,
    path: canonical,
    ...(child.deny === undefined ? {} : { rule: child.deny.location }),
  });
}

function granted(explanation: PermissionExplanation, need: Need): boolean {
  return need === "read" ? explanation.permission !== "none" : explanation.permission === "write";
}

function refusal(scope: Scope, tool: string, asked: string, e: PermissionExplanation): FsToolsError {
  const at = e.path ?? asked;
  const where = shown(asked, at);
  const options = { tool, path: at, ...((e.deny ?? e.allow) ? { rule: (e.deny ?? e.allow)!.location } : {}) };
  if (e.permission === "none" && e.deny !== undefined) {
    return new FsToolsError(
      "OUTSIDE_SCOPE",
      `${tool} refused ${where}: it is denied by ${describeRule(e.deny)}; nothing was accessed`,
      options,
    );
  }
  if (e.permission === "none") {
    const nonRecursive = nonRecursiveRuleAbove(scope, at);
    const why =
      nonRecursive === undefined
        ? `it is outside the scope: no allow rule covers it (readable: ${list(scope.readable)})`
        : `it is outside the scope: the rule on ${nonRecursive} is non-recursive (that directory and its direct children only)`;
    return new FsToolsError("OUTSIDE_SCOPE", `${tool} refused ${where}: ${why}; nothing was accessed`, options);
  }
  // Readable but not writable, and write was needed.
  const why =
    e.deny !== undefined
      ? `it is read-only: ${describeRule(e.deny)} takes write away`
      : `it is read-only: ${describeRule(e.allow!)} grants read, not write (writable: ${list(scope.writable)})`;
  return new FsToolsError("READ_ONLY", `${tool} refused ${where}: ${why}; nothing was written`, options);
}

/** The nearest listed target strictly above `at` (a rule that would cover it if it were recursive). */
function nonRecursiveRuleAbove(scope: Scope, at: string): string | undefined {
  let best: string | undefined;
  for (const target of scope.readable) {
    if (isStrictlyInside(target, at) && (best === undefined || target.length > best.length)) best = target;
  }
  return best;
}

/** `scope.deny[0] (deny read on /abs/x)`. */
export function describeRule(rule: ScopeRuleRef): string {
  const kind = rule.location.startsWith("scope.deny") ? "deny" : "allow";
  return `${rule.location} (${kind} ${rule.permission} on ${rule.target}${rule.recursive ? "" : ", non-recursive"})`;
}

/** `"../x" (/abs/x)` when the model's spelling differs from the resolved path, else the path. */
export function shown(asked: string, resolved: string): string {
  return asked === resolved ? resolved : `${JSON.stringify(asked)} (${resolved})`;
}

function list(paths: readonly string[]): string {
  return paths.length === 0 ? "(none)" : paths.join(", ");
}

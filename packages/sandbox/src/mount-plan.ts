import { lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isSameOrInside, pathSegments } from "@insomnia/safe-read";
import { type Permission, Scope, type ScopeRule } from "@insomnia/scope";
import type { SystemEntry } from "./system-paths.ts";

/** One step of the sandbox's file system, applied in order (later steps cover earlier ones). */
export type MountOp =
  /** The real directory or file, read-only. */
  | { readonly op: "ro-bind"; readonly path: string }
  /** The real directory or file, writable. */
  | { readonly op: "bind"; readonly path: string }
  /** A symlink re-created as it is outside (merged-/usr `/bin -> usr/bin`). */
  | { readonly op: "symlink"; readonly path: string; readonly target: string }
  /** An empty read-only directory over a real one: its contents are not there. `0o111` lets deeper mounts be reached. */
  | { readonly op: "mask"; readonly path: string; readonly mode: 0o000 | 0o111 }
  /** An empty file nobody may read over a real one. */
  | { readonly op: "hide-file"; readonly path: string }
  /** An empty directory where nothing is mounted, so the command can start there. */
  | { readonly op: "dir"; readonly path: string };

/** What the sandbox shows of the machine besides the scope: system directories and what is hidden in them. */
export interface SystemView {
  readonly entries: readonly SystemEntry[];
  /** Paths inside system directories to hide (unreadable to other users outside). */
  readonly hidden: readonly string[];
}

// A name no rule targets: the permission it gets is the one every ordinary child of a directory gets.
const PROBE = ".insomnia-sandbox-probe-\u0001";

/**
 * The scope's rules plus the system view, as one Scope: system directories readable, hidden
 * system paths denied. Built once per sandbox; its answers decide every mount.
 */
export function effectiveScope(scope: Scope, system: SystemView): Scope {
  const rules = scope.rules();
  const toRule = (r: { target: string; permission: "read" | "write"; recursive: boolean }): ScopeRule => ({
    target: r.target,
    permission: r.permission,
    recursive: r.recursive,
  });
  const allow: ScopeRule[] = [
    ...rules.allow.map(toRule),
    ...system.entries.filter((e) => e.kind === "dir").map((e) => ({ target: e.path, permission: "read" as const })),
  ];
  const deny: ScopeRule[] = [
    ...rules.deny.map(toRule),
    ...system.hidden.map((path) => ({ target: path, permission: "read" as const })),
  ];
  return Scope.fromConfig({ allow, deny }, scope.base);
}

/**
 * The mounts that make a sandbox's file system match `effective` (see {@link effectiveScope})
 * as the disk is now: each rule target, each denied path, each subdirectory of a
 * non-recursive rule's target (its contents are beyond the rule), and `.git` inside each
 * writable mount (kept read-only). Everything not mounted is absent. `cwd` gets an empty
 * directory when nothing covers it.
 */
export function planMounts(effective: Scope, system: SystemView, cwd: string): MountOp[] {
  const rules = effective.rules();
  const roots = rules.allow.map((r) => r.target);
  const withinRoots = (path: string): boolean => roots.some((root) => isSameOrInside(root, path));

  const candidates = new Set<string>(roots);
  for (const rule of rules.deny) if (withinRoots(rule.target)) candidates.add(rule.target);
  for (const rule of [...rules.allow, ...rules.deny]) {
    if (rule.recursive) continue;
    for (const child of subdirectories(rule.target)) if (withinRoots(child)) candidates.add(child);
  }

  const decided = new Map<string, Decision>();
  for (const path of candidates) {
    const decision = decide(effective, path);
    if (decision !== undefined) decided.set(path, decision);
  }
  for (const [path, decision] of [...decided]) {
    if (decision.kind !== "dir" || decision.inner !== "write") continue;
    const git = join(path, ".git");
    const gitDecision = decided.get(git) ?? decide(effective, git);
    if (gitDecision === undefined) continue;
    decided.set(git, { ...gitDecision, inner: cap(gitDecision.inner), self: cap(gitDecision.self) });
  }

  const ops: MountOp[] = [];
  for (const entry of system.entries)
    if (entry.kind === "symlink") ops.push({ op: "symlink", path: entry.path, target: entry.target });
  const ordered = [...decided.keys()].sort(byDepth);
  const placed: { path: string; op: MountOp["op"] }[] = [];
  for (const [index, path] of ordered.entries()) {
    const decision = decided.get(path)!;
    const op = opFor(path, decision, ordered.slice(index + 1));
    const enclosing = placed.findLast((p) => isSameOrInside(p.path, path));
    // A bind inside a bind of the same kind changes nothing.
    if (enclosing !== undefined && enclosing.op === op.op && (op.op === "bind" || op.op === "ro-bind")) continue;
    placed.push({ path, op: op.op });
    ops.push(op);
  }
  if (!placed.some((p) => isSameOrInside(p.path, cwd))) ops.push({ op: "dir", path: cwd });
  return ops;
}

interface Decision {
  readonly kind: "dir" | "file";
  /** Permission of the path itself. */
  readonly self: Permission;
  /** Permission of an ordinary child (a directory's contents). */
  readonly inner: Permission;
}

function decide(effective: Scope, path: string): Decision | undefined {
  let isDir: boolean;
  try {
    const stat = lstatSync(path);
    // A symlink is judged where it points, by the mounts there.
    if (stat.isSymbolicLink()) return undefined;
    isDir = stat.isDirectory();
  } catch {
    return undefined;
  }
  const self = effective.explain(path, { resolved: true }).permission;
  if (!isDir) return { kind: "file", self, inner: self };
  return { kind: "dir", self, inner: effective.explain(join(path, PROBE), { resolved: true }).permission };
}

function opFor(path: string, decision: Decision, later: readonly string[]): MountOp {
  if (decision.kind === "file") {
    if (decision.self === "none") return { op: "hide-file", path };
    return { op: decision.self === "write" ? "bind" : "ro-bind", path };
  }
  if (decision.self !== "none" && decision.inner !== "none") {
    return { op: decision.inner === "write" ? "bind" : "ro-bind", path };
  }
  const nested = later.some((other) => isSameOrInside(path, other));
  return { op: "mask", path, mode: nested || decision.self !== "none" ? 0o111 : 0o000 };
}

function cap(permission: Permission): Permission {
  return permission === "write" ? "read" : permission;
}

function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name));
  } catch {
    return [];
  }
}

function byDepth(a: string, b: string): number {
  const depth = pathSegments(a).length - pathSegments(b).length;
  return depth !== 0 ? depth : a < b ? -1 : a > b ? 1 : 0;
}

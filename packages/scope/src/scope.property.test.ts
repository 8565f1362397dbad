import { lstatSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { canonicalPath } from "./canonical-path.ts";
import { Scope } from "./scope.ts";
import type { ScopeRule } from "./scope-config.ts";
import { ScopeError } from "./scope-error.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

// Random trees of real directories, files and symlinks (to parents, outside, themselves,
// missing places) under <tmp>/<run>/{w,out}; the scope's base is w. Everything is checked
// against the kernel: realpathSync for existing paths, mkdir + realpathSync for missing ones.

const DIR_NAMES = ["a", "b", "c"] as const;
const LINK_NAMES = ["l0", "l1", "l2"] as const;
const RAW_LINK_TARGETS = ["..", "../..", ".", "../out", "a/../..", "l0", "l1", "l2/a", "../l0", "x"] as const;

type TargetSpec =
  | { type: "node"; index: number; relativeLink: boolean }
  | { type: "missing"; index: number }
  | { type: "raw"; text: string };

type Op =
  | { kind: "dir" | "file"; parent: number; name: string }
  | { kind: "link"; parent: number; name: string; target: TargetSpec };

interface RuleSpec {
  node: number;
  permission: "read" | "write";
  recursive: boolean | undefined;
  relativeTarget: boolean;
}

const targetArb: fc.Arbitrary<TargetSpec> = fc.oneof(
  fc.record({ type: fc.constant("node" as const), index: fc.nat(), relativeLink: fc.boolean() }),
  fc.record({ type: fc.constant("missing" as const), index: fc.nat() }),
  fc.record({ type: fc.constant("raw" as const), text: fc.constantFrom(...RAW_LINK_TARGETS) }),
);

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constantFrom("dir" as const, "dir" as const, "file" as const),
      parent: fc.nat({ max: 4 }),
      name: fc.constantFrom(...DIR_NAMES),
    }),
  },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("link" as const),
      parent: fc.nat({ max: 4 }),
      name: fc.constantFrom(...LINK_NAMES),
      target: targetArb,
    }),
  },
);

const ruleArb: fc.Arbitrary<RuleSpec> = fc.record({
  node: fc.nat(),
  permission: fc.constantFrom("read" as const, "write" as const),
  recursive: fc.constantFrom(true, false, undefined),
  relativeTarget: fc.boolean(),
});

// Weighted towards links and `..`, where resolution order matters.
const tokenArb = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...LINK_NAMES) },
  { weight: 3, arbitrary: fc.constant("..") },
  { weight: 3, arbitrary: fc.constantFrom(...DIR_NAMES) },
  { weight: 1, arbitrary: fc.constantFrom(".", "w", "out", "x") },
);

const queryArb = fc.record({
  tokens: fc.array(tokenArb, { maxLength: 7 }),
  absolute: fc.boolean(),
});

const treeArb = fc.record({
  ops: fc.array(opArb, { maxLength: 12 }),
  allow: fc.array(ruleArb, { minLength: 1, maxLength: 3 }),
  deny: fc.array(ruleArb, { maxLength: 2 }),
});

let tmp: string;
let counter = 0;

beforeAll(() => {
  tmp = realpathSync(mkdtempSync(join(tmpdir(), "scope-prop-")));
});

afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
});

interface World {
  root: string;
  base: string;
  /** Every created path (dirs, files, links), `w` and `out` first. */
  nodes: string[];
}

function buildWorld(ops: readonly Op[]): World {
  const root = join(tmp, `t${counter++}`);
  const base = join(root, "w");
  mkdirSync(base, { recursive: true });
  mkdirSync(join(root, "out"));
  const dirs = [base, join(root, "out")];
  const nodes = [...dirs];
  for (const op of ops) {
    const at = join(dirs[op.parent % dirs.length] as string, op.name);
    if (exists(at)) continue;
    if (op.kind === "link") {
      symlinkSync(linkTarget(op.target, at, nodes), at);
    } else if (op.kind === "dir") {
      mkdirSync(at);
      dirs.push(at);
    } else {
      writeFileSync(at, "");
    }
    nodes.push(at);
  }
  return { root, base, nodes };
}

function linkTarget(spec: TargetSpec, at: string, nodes: readonly string[]): string {
  if (spec.type === "raw") return spec.text;
  const node = nodes[spec.index % nodes.length] as string;
  const target = spec.type === "missing" ? join(node, "missing") : node;
  return spec.type === "node" && spec.relativeLink ? relative(dirname(at), target) || "." : target;
}

function exists(p: string): boolean {
  try {
    lstatSync(p);
    return true;
  } catch {
    return false;
  }
}

function toRule(spec: RuleSpec, world: World): ScopeRule {
  const node = world.nodes[spec.node % world.nodes.length] as string;
  const target = spec.relativeTarget ? relative(world.base, node) || "." : node;
  return spec.recursive === undefined
    ? { target, permission: spec.permission }
    : { target, permission: spec.permission, recursive: spec.recursive };
}

function kernelRealpath(p: string): string | undefined {
  try {
    return realpathSync.native(p);
  } catch {
    return undefined;
  }
}

/** Oracle, by string comparison: whether canonical `q` is under `t` (within one level if not recursive). */
function under(q: string, t: string, recursive: boolean): boolean {
  if (q === t) return true;
  const prefix = t.endsWith("/") ? t : `${t}/`;
  if (!q.startsWith(prefix)) return false;
  return recursive || !q.slice(prefix.length).includes("/");
}

interface OracleRule {
  target: string;
  permission: "read" | "write";
  recursive: boolean;
}

function oraclePermission(q: string, allow: readonly OracleRule[], deny: readonly OracleRule[]): string {
  let rank = 0;
  for (const r of allow) if (under(q, r.target, r.recursive)) rank = Math.max(rank, r.permission === "write" ? 2 : 1);
  for (const r of deny) if (under(q, r.target, r.recursive)) rank = Math.min(rank, r.permission === "read" ? 0 : 1);
  return ["none", "read", "write"][rank] as string;
}

/** Kernel-resolved targets; undefined when a target does not resolve (dangling or looping link). */
function oracleRules(rules: readonly ScopeRule[], base: string): OracleRule[] | undefined {
  const out: OracleRule[] = [];
  for (const r of rules) {
    const real = kernelRealpath(r.target.startsWith("/") ? r.target : `${base}/${r.target}`);
    if (real === undefined) return undefined;
    out.push({ target: real, permission: r.permission, recursive: r.recursive ?? true });
  }
  return out;
}

function queryPath(query: { tokens: readonly string[]; absolute: boolean }, world: World): { q: string; full: string } {
  const rel = query.tokens.join("/");
  const q = query.absolute ? `${world.base}/${rel}` : rel;
  return { q, full: `${world.base}/${rel}` };
}

/** Canonical means: no `.`/`..`/empty segments, and the deepest existing ancestor is its own realpath. */
function expectCanonical(c: string): void {
  expect(c.startsWith("/")).toBe(true);
  const segments = c.split("/").slice(1);
  expect(segments.filter((s) => s === "." || s === ".." || (s === "" && c !== "/"))).toEqual([]);
  let existing = c;
  while (!exists(existing)) existing = dirname(existing);
  expect(kernelRealpath(existing)).toBe(existing);
}

/** Creates the missing directories of `full` the way the kernel resolves it; false if it cannot. */
function materialize(full: string, root: string): boolean {
  const parts = full.split("/");
  let prefix = "";
  for (const part of parts.slice(1)) {
    const parent = prefix === "" ? "/" : prefix;
    prefix = `${prefix}/${part}`;
    if (part === "" || part === "." || part === ".." || exists(prefix)) continue;
    const realParent = kernelRealpath(parent);
    // Never create anything outside this run's directory (the suite may run as root).
    if (realParent === undefined || !under(realParent, root, true)) return false;
    try {
      mkdirSync(prefix);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") return false;
    }
  }
  return kernelRealpath(full) !== undefined;
}

describe("scope properties", () => {
  test("existing_paths_agree_with_the_kernel_and_permission_matches_the_oracle", () => {
    fc.assert(
      fc.property(treeArb, fc.array(queryArb, { minLength: 1, maxLength: 10 }), ({ ops, allow, deny }, queries) => {
        const world = buildWorld(ops);
        const allowRules = allow.map((r) => toRule(r, world));
        const denyRules = deny.map((r) => toRule(r, world));
        const oracleAllow = oracleRules(allowRules, world.base);
        const oracleDeny = oracleRules(denyRules, world.base);
        if (oracleAllow === undefined || oracleDeny === undefined) return;
        const scope = Scope.fromConfig({ allow: allowRules, deny: denyRules }, world.base);
        expect(scope.readable.every((t) => oracleAllow.some((r) => r.target === t))).toBe(true);

        for (const query of queries) {
          const { q, full } = queryPath(query, world);
          const real = kernelRealpath(full);
          const permission = scope.permissionAt(q);
          if (real !== undefined) {
            expect(canonicalPath(q, world.base)).toBe(real);
            expect(permission).toBe(oraclePermission(real, oracleAllow, oracleDeny));
            continue;
          }
          let c: string;
          try {
            c = canonicalPath(q, world.base);
          } catch (error) {
            expect(ScopeError.is(error) && error.code).toBe("SYMLINK_LOOP");
            expect(permission).toBe("none");
            continue;
          }
          expectCanonical(c);
          // Nothing is readable unless its canonical location is inside a real allow target.
          expect(permission).toBe(oraclePermission(c, oracleAllow, oracleDeny));
        }
      }),
      { numRuns: propertyRuns(60, 200) },
    );
  });

  test("missing_paths_resolve_to_where_the_kernel_would_create_them", () => {
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 12 }),
        fc.array(queryArb, { minLength: 1, maxLength: 5 }),
        (ops, queries) => {
          const world = buildWorld(ops);
          for (const query of queries) {
            const { q, full } = queryPath(query, world);
            if (kernelRealpath(full) !== undefined) continue;
            let c: string;
            try {
              c = canonicalPath(q, world.base);
            } catch {
              continue;
            }
            if (!materialize(full, world.root)) continue;
            expect(kernelRealpath(full)).toBe(c);
          }
        },
      ),
      { numRuns: propertyRuns(60, 200) },
    );
  });

  test("kernel_symlink_loops_are_reported_as_loops", () => {
    // w/l1 -> l2 -> l1 guarantees a loop for queries to run into.
    const loop: Op[] = [
      { kind: "link", parent: 0, name: "l1", target: { type: "raw", text: "l2" } },
      { kind: "link", parent: 0, name: "l2", target: { type: "raw", text: "l1" } },
    ];
    fc.assert(
      fc.property(
        fc.array(opArb, { maxLength: 12 }),
        fc.array(queryArb, { minLength: 1, maxLength: 5 }),
        (ops, queries) => {
          const world = buildWorld([...loop, ...ops]);
          for (const query of queries) {
            const { q, full } = queryPath(query, world);
            let kernelCode: string | undefined;
            try {
              realpathSync.native(full);
            } catch (error) {
              kernelCode = (error as NodeJS.ErrnoException).code;
            }
            if (kernelCode !== "ELOOP") continue;
            expect(() => canonicalPath(q, world.base)).toThrowError(expect.objectContaining({ code: "SYMLINK_LOOP" }));
          }
        },
      ),
      { numRuns: propertyRuns(30, 100) },
    );
  });
});

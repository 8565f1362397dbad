import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, test, vi } from "vitest";
import { canonicalPath } from "./canonical-path.ts";
import { Scope } from "./scope.ts";
import type { Permission, ScopeConfig } from "./scope-config.ts";
import { ScopeError, type ScopeErrorCode } from "./scope-error.ts";
import { guarded as recordOutput } from "../../../test/support/output-guard.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// Hostile path queries (`..` chains, NUL, very long paths, 200-deep `a/../` chains, unicode
// lookalikes, symlinks out, symlink loops) against a real tree, and hostile scope configs.
// The oracle resolves every existing component with the kernel (realpathSync.native, one
// component at a time), so "readable" is checked against where the kernel would really read.

const SEED = 0x5c0e_0001;
const QUERY_RUNS = propertyRuns(300, 12_000);
const CONFIG_RUNS = propertyRuns(100, 2_000);

const CODES: ReadonlySet<ScopeErrorCode> = new Set([
  "INVALID_BASE",
  "NO_ALLOW_RULE",
  "INVALID_RULE",
  "INVALID_PATH",
  "SYMLINK_LOOP",
]);
const RANK: Record<Permission, number> = { none: 0, read: 1, write: 2 };
const BY_RANK: readonly Permission[] = ["none", "read", "write"];

const counts = {
  cases: 0,
  queries: 0,
  configs: 0,
  typedErrors: 0,
  withCode: 0,
  withPosition: 0,
  correct: 0,
  outside: 0,
  byOutcome: new Map<string, number>(),
};

let root: string;
let base: string;
let scope: Scope;
let rules: OracleRules;

beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "insomnia-scope-hostile-")));
  base = join(root, "w");
  const dir = (p: string): void => void mkdirSync(join(root, p), { recursive: true });
  const file = (p: string): void => {
    dir(dirname(p));
    writeFileSync(join(root, p), p);
  };
  const link = (target: string, p: string): void => symlinkSync(target, join(root, p));
  file("w/file.txt");
  file("w/dir/sub/deep.txt");
  file("w/ro/r.txt");
  file("w/secret/key.txt");
  file("w/caf\u00e9/nfc.txt");
  dir(`w/${"n".repeat(255)}`);
  link("secret", "w/secret-link");
  link(join(root, "w/secret"), "w/secret-abs");
  link("../out", "w/link-out");
  link(join(root, "out"), "w/abs-out");
  link("../out/secret.txt", "w/out-file");
  link("..", "w/up");
  link(".", "w/self");
  link("/", "w/root-link");
  link("loop", "w/loop");
  link("loopb", "w/loopa");
  link("loopa", "w/loopb");
  link("loopdir/x", "w/loopdir");
  link("newdir/newfile", "w/dangling-in");
  link("../out/created", "w/dangling-out");
  link(join(root, "out/created2"), "w/dangling-abs");
  link("../docs", "w/docs-link");
  link("../w-evil", "w/evil");
  link("ro", "w/ro-link");
  file("w-evil/secret.txt");
  file("out/secret.txt");
  dir("out/dir");
  file("docs/readme.txt");
  file("shallow/child.txt");
  file("shallow/sub/grand.txt");
  const config: ScopeConfig = {
    allow: [
      { target: ".", permission: "write" },
      { target: "../shallow", permission: "read", recursive: false },
      { target: "docs-link", permission: "read" },
    ],
    deny: [
      { target: "secret-link", permission: "read" },
      { target: "ro", permission: "write" },
    ],
  };
  scope = Scope.fromConfig(config, base);
  const oracle = oracleRules(config, base);
  if (oracle === undefined) throw new Error("fixture rules must resolve");
  rules = oracle;
});

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  const outcomes = [...counts.byOutcome.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, n]) => `${k} ${n}`);
  console.log(
    `[hostile-input] @insomnia/scope (seed ${SEED}): ${counts.cases} cases (${counts.queries} path queries, ${counts.configs} configs), ` +
      `${counts.typedErrors} typed errors (${counts.withCode} with a code, ${counts.withPosition} with a position), ` +
      `${counts.correct} correct results, ${counts.outside} readable outside the real allowed target; ${outcomes.join(", ")}`,
  );
});

// ---- oracle -----------------------------------------------------------------------------

/** Where the kernel would read or create `path`: existing components via realpath, missing ones as new plain directories. */
interface Location {
  /** The real location, or "loop" when the kernel reports ELOOP on the way. */
  at: string | "loop";
  /** Symlinks met; near the 40-hop limit the library may refuse (SYMLINK_LOOP), which is safe. */
  hops: number;
}

function errnoOf(error: unknown): string {
  return String((error as { code?: unknown }).code);
}

function locate(input: string, from: string): Location {
  const todo = (input.startsWith("/") ? input : `${from}/${input}`).split("/").reverse();
  let real = "/";
  const created: string[] = [];
  let hops = 0;
  while (todo.length > 0) {
    const part = todo.pop() as string;
    if (part === "" || part === ".") continue;
    if (part === "..") {
      if (created.length > 0) created.pop();
      else real = dirname(real);
      continue;
    }
    if (created.length > 0) {
      created.push(part);
      continue;
    }
    const candidate = real === "/" ? `/${part}` : `${real}/${part}`;
    let isLink = false;
    try {
      isLink = lstatSync(candidate).isSymbolicLink();
    } catch {
      // Missing (or a name too long): it would be created as a plain directory.
    }
    if (isLink) hops += 1;
    try {
      real = realpathSync.native(candidate);
      continue;
    } catch (error) {
      const code = errnoOf(error);
      if (code === "ELOOP") return { at: "loop", hops };
      if (!isLink) {
        created.push(part);
        continue;
      }
    }
    // A dangling symlink: creating through it creates its target.
    if (hops > 40) return { at: "loop", hops };
    const target = readlinkSync(candidate);
    if (target.startsWith("/")) real = "/";
    todo.push(...target.split("/").reverse());
  }
  return { at: created.length === 0 ? real : join(real, ...created), hops };
}

interface OracleRule {
  target: string;
  permission: "read" | "write";
  recursive: boolean;
}
interface OracleRules {
  allow: OracleRule[];
  deny: OracleRule[];
}

function oracleRules(config: ScopeConfig, from: string): OracleRules | undefined {
  const one = (r: {
    target: string;
    permission: "read" | "write";
    recursive?: boolean | undefined;
  }): OracleRule | undefined => {
    const { at } = locate(r.target, from);
    return at === "loop" ? undefined : { target: at, permission: r.permission, recursive: r.recursive ?? true };
  };
  const allow = config.allow.map(one);
  const deny = (config.deny ?? []).map(one);
  if ([...allow, ...deny].some((r) => r === undefined)) return undefined;
  return { allow: allow as OracleRule[], deny: deny as OracleRule[] };
}

/** Whether `at` is the target or below it (one level at most when not recursive), by whole segments. */
function under(at: string, rule: OracleRule): boolean {
  if (at === rule.target) return true;
  const prefix = rule.target === "/" ? "/" : `${rule.target}/`;
  if (!at.startsWith(prefix)) return false;
  return rule.recursive || !at.slice(prefix.length).includes("/");
}

function expectedAt(at: string, r: OracleRules): Permission {
  let rank = 0;
  for (const rule of r.allow) if (under(at, rule)) rank = Math.max(rank, RANK[rule.permission]);
  for (const rule of r.deny) if (under(at, rule)) rank = Math.min(rank, rule.permission === "read" ? 0 : 1);
  return BY_RANK[rank] as Permission;
}

// ---- generators -------------------------------------------------------------------------

const NAMES = [
  "file.txt",
  "dir",
  "sub",
  "deep.txt",
  "ro",
  "r.txt",
  "secret",
  "key.txt",
  "secret-link",
  "secret-abs",
  "link-out",
  "abs-out",
  "out-file",
  "up",
  "self",
  "root-link",
  "loop",
  "loopa",
  "loopdir",
  "dangling-in",
  "dangling-out",
  "dangling-abs",
  "docs-link",
  "evil",
  "ro-link",
  "w",
  "out",
  "w-evil",
  "docs",
  "readme.txt",
  "shallow",
  "child.txt",
  "grand.txt",
  "created",
  "newdir",
  "missing",
  "tmp",
  "etc",
  "passwd",
  "caf\u00e9",
  "cafe\u0301",
  "nfc.txt",
  "n".repeat(255),
  "n".repeat(256),
] as const;
const TRICKS = [
  "\0",
  "a\0b",
  "..\0",
  "\u2024\u2024",
  "\uff0e\uff0e",
  "..\u200b",
  "\u202e..",
  "%2e%2e",
  "%2f",
  "\\..",
  "..\\..",
  "\u2026",
  "~",
  "$HOME",
  " .. ",
  "...",
  "..;",
  "\ud800",
  "\ud83d\ude00",
  "\u00c0\u00ae",
  "C:",
  "C:\\",
  "\\\\?\\",
  "x".repeat(300),
  "*",
  "?",
] as const;

const tokenArb = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...NAMES) },
  { weight: 5, arbitrary: fc.constant("..") },
  { weight: 1, arbitrary: fc.constantFrom(".", "") },
  { weight: 2, arbitrary: fc.constantFrom(...TRICKS) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", minLength: 1, maxLength: 3 }) },
);
const walkArb = fc.array(tokenArb, { minLength: 0, maxLength: 12 }).map((t) => t.join("/"));

/** How a query is anchored: relative to base, absolute under base or root, or from `/`. */
type Anchor = "rel" | "base" | "root" | "slash";
const anchorArb = fc.constantFrom<Anchor>("rel", "rel", "base", "root", "slash");
function anchored(anchor: Anchor, rest: string): string {
  if (anchor === "rel") return rest;
  if (anchor === "base") return `${base}/${rest}`;
  if (anchor === "root") return `${root}/${rest}`;
  return `/${rest}`;
}

const queryArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.tuple(anchorArb, walkArb).map(([a, w]) => anchored(a, w)) },
  // 200-deep `a/../` chains (missing `a`, an existing dir, a link out) and long `..` runs.
  {
    weight: 2,
    arbitrary: fc
      .tuple(
        anchorArb,
        fc.constantFrom("a/../", "dir/../", "link-out/../", "up/w/", "self/", "dir/sub/../../", "../"),
        fc.oneof(fc.integer({ min: 1, max: 20 }), fc.constant(200)),
        walkArb,
      )
      .map(([a, unit, n, tail]) => anchored(a, unit.repeat(n) + tail)),
  },
  // Very long paths, over PATH_MAX and NAME_MAX.
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        anchorArb,
        fc.oneof(
          fc.tuple(fc.constantFrom("x/", "dir/", "./", "self/../"), fc.integer({ min: 100, max: 1_500 })),
          fc.tuple(fc.constant(`${"n".repeat(200)}/`), fc.integer({ min: 10, max: 40 })),
        ),
        walkArb,
      )
      .map(([a, [unit, n], tail]) => anchored(a, unit.repeat(n) + tail)),
  },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
);

// ---- checks -----------------------------------------------------------------------------

function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

function note(outcome: string): void {
  counts.byOutcome.set(outcome, (counts.byOutcome.get(outcome) ?? 0) + 1);
}

function countError(error: unknown): ScopeError {
  if (!ScopeError.is(error)) throw error;
  const e = error;
  check(CODES.has(e.code), () => `undocumented code ${e.code}`);
  counts.typedErrors += 1;
  counts.withCode += 1;
  if (e.path !== undefined || e.rule !== undefined) counts.withPosition += 1;
  note(e.code);
  return e;
}

function permissionOf(s: Scope, query: unknown): Permission {
  // permissionAt must never throw, whatever it is given.
  try {
    return s.permissionAt(query as string);
  } catch (error) {
    throw new Error(`permissionAt threw for ${JSON.stringify(String(query)).slice(0, 200)}: ${String(error)}`);
  }
}

/** One query against `s`: canonicalPath and permissionAt checked against the kernel-backed oracle. */
function checkQuery(s: Scope, r: OracleRules, query: string, from: string): void {
  counts.cases += 1;
  counts.queries += 1;
  const permission = permissionOf(s, query);
  check(
    permission === "none" || permission === "read" || permission === "write",
    () => `permission ${String(permission)}`,
  );
  if (counts.queries % 10 === 0) {
    check(
      s.isReadable(query) === (permission !== "none") && s.isWritable(query) === (permission === "write"),
      () => "isReadable/isWritable disagree",
    );
  }
  const hasNul = query.includes("\0");
  const loc = hasNul ? undefined : locate(query, from);
  if (loc !== undefined && loc.at !== "loop" && permission !== "none") {
    // The security invariant: nothing is readable outside where the allow rules really point.
    const allowed = expectedAt(loc.at, r);
    if (RANK[permission] > RANK[allowed]) {
      counts.outside += 1;
      throw new Error(
        `${JSON.stringify(query)} is ${permission}, but the kernel reaches ${loc.at}, which is ${allowed}`,
      );
    }
  }
  let canonical: string;
  try {
    canonical = canonicalPath(query, from);
  } catch (error) {
    const e = countError(error);
    check(permission === "none", () => `${e.code} yet permission ${permission}`);
    if (hasNul) check(e.code === "INVALID_PATH", () => `NUL query gave ${e.code}`);
    else
      check(
        e.code === "SYMLINK_LOOP" && (loc?.at === "loop" || (loc?.hops ?? 0) >= 30),
        () => `${e.code} for ${JSON.stringify(query)} (oracle ${loc?.at})`,
      );
    return;
  }
  check(
    !hasNul && loc !== undefined && loc.at !== "loop",
    () => `canonicalPath resolved ${JSON.stringify(query)} to ${canonical}; the kernel says ${loc?.at ?? "NUL"}`,
  );
  const at = (loc as Location).at;
  check(canonical === at, () => `canonicalPath(${JSON.stringify(query)}) = ${canonical}, the kernel resolves ${at}`);
  check(
    permission === expectedAt(at, r),
    () => `${JSON.stringify(query)}: ${permission}, expected ${expectedAt(at, r)} at ${at}`,
  );
  counts.correct += 1;
  note(`ok:${permission}`);
}

// ---- output guard -----------------------------------------------------------------------

async function guarded(run: () => void): Promise<void> {
  const { printed, rejections } = await recordOutput(run);
  expect(printed).toEqual([]);
  expect(rejections).toEqual([]);
}

// ---- configs ----------------------------------------------------------------------------

const targetArb = fc.oneof(
  { weight: 15, arbitrary: fc.tuple(anchorArb, walkArb).map(([a, w]) => anchored(a, w)) },
  {
    weight: 1,
    arbitrary: fc.constantFrom<unknown>(
      "",
      "\0",
      ".\0",
      0,
      null,
      undefined,
      {},
      ["."],
      "loop",
      "loopa/x",
      `${"self/".repeat(45)}w`,
    ),
  },
);
const ruleArb = fc.oneof(
  {
    weight: 20,
    arbitrary: fc.record(
      {
        target: targetArb,
        permission: fc.oneof(
          { weight: 12, arbitrary: fc.constantFrom<unknown>("read", "write") },
          { weight: 1, arbitrary: fc.constantFrom<unknown>("READ", "", "none", "rw", null, 1) },
        ),
        recursive: fc.oneof(
          { weight: 12, arbitrary: fc.constantFrom<unknown>(true, false, undefined) },
          { weight: 1, arbitrary: fc.constantFrom<unknown>("yes", 0, null) },
        ),
      },
      { requiredKeys: ["target", "permission"] },
    ),
  },
  { weight: 1, arbitrary: fc.constantFrom<unknown>(null, "rule", 42, [], [{ target: ".", permission: "read" }]) },
);
const configArb = fc.record({
  allow: fc.oneof(
    { weight: 15, arbitrary: fc.array(ruleArb, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>([], undefined, null, "all", {}) },
  ),
  deny: fc.oneof(
    { weight: 15, arbitrary: fc.array(ruleArb, { maxLength: 2 }) },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, "none", {}) },
  ),
  base: fc.oneof(
    { weight: 15, arbitrary: fc.constant("<base>") },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        "relative",
        "",
        "/tmp/\0",
        "<base>/loop",
        "<base>/missing/deeper",
        "<base>/self",
        7,
      ),
    },
  ),
  queries: fc.array(queryArb, { minLength: 1, maxLength: 4 }),
});

function isValidRule(rule: unknown): rule is { target: string; permission: "read" | "write"; recursive?: boolean } {
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return false;
  const { target, permission, recursive } = rule as Record<string, unknown>;
  return (
    typeof target === "string" &&
    target !== "" &&
    !target.includes("\0") &&
    (permission === "read" || permission === "write") &&
    (recursive === undefined || typeof recursive === "boolean")
  );
}

// ---- tests ------------------------------------------------------------------------------

describe("scope under hostile input", () => {
  test("hostile_queries_are_never_readable_outside_the_real_allowed_target", async () => {
    await guarded(() => {
      fc.assert(
        fc.property(queryArb, (query) => {
          checkQuery(scope, rules, query, base);
        }),
        {
          seed: SEED,
          numRuns: QUERY_RUNS,
          endOnFailure: true,
          examples: [
            ["link-out/secret.txt"],
            ["secret-link/key.txt"],
            ["dangling-out"],
            [`${"a/../".repeat(200)}../out/secret.txt`],
            [`${"self/".repeat(45)}file.txt`],
            ["loopdir/x"],
            ["dir/../../w-evil/secret.txt"],
            ["docs-link/../out/secret.txt"],
            [`${"x/".repeat(2_500)}../../out`],
            ["file.txt\0/../../out"],
          ],
        },
      );
      // Not a string at all: still "none", never a throw.
      for (const odd of [undefined, null, 42, {}, [], Symbol("x"), { toString: () => "/" }]) {
        counts.cases += 1;
        counts.queries += 1;
        const permission = permissionOf(scope, odd);
        check(permission === "none", () => `permissionAt(${typeof odd}) = ${permission}`);
        try {
          canonicalPath(odd as string, base);
          throw new Error(`canonicalPath accepted a ${typeof odd}`);
        } catch (error) {
          check(countError(error).code === "INVALID_PATH", () => "non-string path without INVALID_PATH");
        }
      }
    });
    expect(counts.outside).toBe(0);
    for (const outcome of ["ok:none", "ok:read", "ok:write", "INVALID_PATH", "SYMLINK_LOOP"]) {
      expect([outcome, (counts.byOutcome.get(outcome) ?? 0) > 0]).toEqual([outcome, true]);
    }
  });

  test("hostile_configs_are_refused_with_a_code_or_enforced_exactly", async () => {
    await guarded(() => {
      fc.assert(
        fc.property(configArb, ({ allow, deny, base: rawBase, queries }) => {
          counts.cases += 1;
          counts.configs += 1;
          const b = typeof rawBase === "string" ? rawBase.replace("<base>", base) : rawBase;
          const config = { allow, deny } as unknown as ScopeConfig;
          let s: Scope;
          try {
            s = Scope.fromConfig(config, b as string);
          } catch (error) {
            const e = countError(error);
            const structural =
              typeof b === "string" &&
              b.startsWith("/") &&
              !b.includes("\0") &&
              Array.isArray(allow) &&
              allow.length > 0 &&
              allow.every(isValidRule) &&
              (deny === undefined || (Array.isArray(deny) && deny.every(isValidRule)));
            // A structurally valid config may only fail on a target or base that cannot be resolved.
            if (structural) {
              check(
                e.code === "INVALID_RULE" || e.code === "INVALID_BASE",
                () => `valid config refused with ${e.code}: ${e.message}`,
              );
              check(
                e.cause !== undefined && ScopeError.is(e.cause) && e.cause.code === "SYMLINK_LOOP",
                () => `valid config refused: ${e.message}`,
              );
            }
            return;
          }
          // Accepted: it must have been valid, and it must enforce exactly what the kernel says.
          check(
            typeof b === "string" && Array.isArray(allow) && allow.length > 0 && allow.every(isValidRule),
            () => `accepted an invalid config ${String(allow)}`,
          );
          check(
            deny === undefined || (Array.isArray(deny) && deny.every(isValidRule)),
            () => "accepted invalid deny rules",
          );
          check(
            [...s.readable, ...s.writable].every((t) => t.startsWith("/") && !t.includes("\0")),
            () => "non-canonical readable/writable",
          );
          check(s.summary().startsWith("Readable:\n") && s.summary().includes("\nWritable:\n"), () => "summary format");
          const sBase = locate(b as string, "/");
          const r = oracleRules(config, sBase.at === "loop" ? (b as string) : sBase.at);
          if (r === undefined || sBase.at === "loop") {
            // Accepted although the oracle sees a loop: only possible near the hop limit.
            note("accepted-near-hop-limit");
            counts.correct += 1;
            return;
          }
          check(s.base === sBase.at, () => `base ${s.base}, kernel ${sBase.at}`);
          counts.correct += 1;
          note("config-accepted");
          for (const query of queries) checkQuery(s, r, query, s.base);
        }),
        { seed: SEED + 1, numRuns: CONFIG_RUNS, endOnFailure: true },
      );
    });
    expect(counts.outside).toBe(0);
    for (const outcome of ["config-accepted", "INVALID_RULE", "NO_ALLOW_RULE", "INVALID_BASE"]) {
      expect([outcome, (counts.byOutcome.get(outcome) ?? 0) > 0]).toEqual([outcome, true]);
    }
  });
});

import { createHash } from "node:crypto";
import { chmodSync, readFileSync, realpathSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { writeEscapeTree } from "./__fixtures__/escape-tree.ts";
import { tempDirs } from "./__fixtures__/temp-dir.ts";
import { PromptLoader } from "./prompt-loader.ts";
import { PromptLoaderError, type PromptLoaderErrorCode } from "./prompt-loader-error.ts";
import { MAX_REF_LENGTH, MAX_REF_SEGMENTS, parseRef, type PromptPrefix, type PromptRef } from "./prompt-ref.ts";
import { guarded } from "../../../test/support/output-guard.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// 100,000 generated prompt references (traversal, encodings, unicode, drive letters, NUL,
// forged PromptRef objects, over-long refs), each parsed with parseRef AND loaded against a
// real tree whose roots are full of symlinks pointing out, FIFOs, devices and bad files.
// Every case must end in a PromptLoaderError with a documented code or a file strictly
// inside its root's real path; nothing may print, warn or reject unhandled.

const SEED = 0x1a5e_0001;
const RUNS = propertyRuns(500, 100_000);
const SECRET = "SECRET-c0ffee never in a prompt";
const MAX_BYTES = 4096;

const CODES: ReadonlySet<PromptLoaderErrorCode> = new Set([
  "INVALID_REF",
  "UNKNOWN_PREFIX",
  "UNQUALIFIED_WITHOUT_CURRENT",
  "PREFIX_NOT_CONFIGURED",
  "NOT_FOUND",
  "PATH_ESCAPE",
  "NOT_A_FILE",
  "TOO_LARGE",
  "BAD_ENCODING",
  "READ_FAILED",
]);
const PARSE_CODES: ReadonlySet<PromptLoaderErrorCode> = new Set([
  "INVALID_REF",
  "UNKNOWN_PREFIX",
  "UNQUALIFIED_WITHOUT_CURRENT",
]);
const INDEX_CODES: ReadonlySet<PromptLoaderErrorCode> = new Set(["INVALID_REF", "UNKNOWN_PREFIX"]);
const FILE_CODES: ReadonlySet<PromptLoaderErrorCode> = new Set([
  "NOT_FOUND",
  "PATH_ESCAPE",
  "NOT_A_FILE",
  "TOO_LARGE",
  "BAD_ENCODING",
  "READ_FAILED",
]);
const GRAMMAR = /^\$(insomnia|user|workspace)\/[A-Za-z0-9][A-Za-z0-9_-]*(\/[A-Za-z0-9][A-Za-z0-9_-]*)*$/;

const counts = {
  cases: 0,
  parsed: 0,
  loaded: 0,
  typedErrors: 0,
  withCode: 0,
  withPosition: 0,
  correct: 0,
  outsideRoot: 0,
  byCode: new Map<string, number>(),
};

const temp = tempDirs();
let base: string;
let loader: PromptLoader;
/** Same tree, but no $user root and a $workspace root that does not exist. */
let partialLoader: PromptLoader;
let socketServer: Server | undefined;

beforeAll(async () => {
  base = await temp.make();
  // The shared escape tree (see writeEscapeTree), then more of the same outside and in each root.
  const { file, link } = await writeEscapeTree(base, SECRET);
  await file("user-evil/ok.md", SECRET);
  await file("home/.ssh/id_rsa.md", SECRET);
  await file("home/.ssh/id_rsa", SECRET);
  await file("user/OK.md", "user OK upper");
  await file("user/a/b/c/deep.md", "user deep");
  await link(join(base, "home/.ssh"), "user/ssh");
  await link(join(base, "home/.ssh/id_rsa"), "user/id_rsa.md");
  await link("loop2b.md", "user/loop2a.md");
  await link("loop2a.md", "user/loop2b.md");
  await link("loopdir", "user/loopdir");
  await link("/dev/zero", "user/zero.md");
  await link("/proc/self/environ", "user/proc.md");
  await link("/etc/passwd", "user/etc.md");
  await link("/", "user/root");
  await link("missing-target.md", "user/dangling.md");
  await file("user/big.md", "a".repeat(MAX_BYTES + 1));
  await file("user/edge.md", "b".repeat(MAX_BYTES));
  await file("user/latin1.md", Uint8Array.from([0x63, 0x61, 0x66, 0xe9, 0x0a]));
  await file("user/overlong.md", Uint8Array.from([0x2e, 0xc0, 0xae, 0x2f]));
  await file("user/bom.md", "\ufeffline one\r\nline two\rthree");
  await file("user/empty.md", "");
  await file("user/noperm.md", "user noperm");
  chmodSync(join(base, "user/noperm.md"), 0o000);
  socketServer = await new Promise<Server | undefined>((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(join(base, "user/sock.md"), () => resolve(server));
  });
  // $workspace root (ws-real, reached through the symlink workspace).
  await file("ws-real/team/review_2.md", "workspace review");
  await link("..", "ws-real/up");
  await link("../user", "ws-real/user");
  // $insomnia root.
  await file("builtin/default.md", "builtin default");
  await link("../ws-real/ok.md", "builtin/ws.md");
  loader = new PromptLoader({
    userDir: join(base, "user"),
    workspaceDir: join(base, "workspace"),
    builtinDir: join(base, "builtin"),
    maxBytes: MAX_BYTES,
  });
  partialLoader = new PromptLoader({
    workspaceDir: join(base, "nowhere"),
    builtinDir: join(base, "builtin"),
    maxBytes: MAX_BYTES,
  });
});

afterAll(async () => {
  await new Promise<void>((resolve) => (socketServer === undefined ? resolve() : socketServer.close(() => resolve())));
  await temp.cleanup();
  const codes = [...counts.byCode.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, n]) => `${code} ${n}`);
  console.log(
    `[hostile-input] @insomnia/prompt-loader (seed ${SEED}): ${counts.cases} cases (parseRef ${counts.parsed}, load ${counts.loaded}), ` +
      `${counts.typedErrors} typed errors (${counts.withCode} with a code, ${counts.withPosition} with a position), ` +
      `${counts.correct} correct results, ${counts.outsideRoot} outside root; ${codes.join(", ")}`,
  );
});

// ---- generators -------------------------------------------------------------------------

const NAMES = [
  "ok",
  "OK",
  "dir",
  "inner",
  "up",
  "upup",
  "link-out",
  "abs-out",
  "dir-out",
  "abs-dir-out",
  "sib",
  "ssh",
  "id_rsa",
  "loop",
  "loop2a",
  "loopdir",
  "dev",
  "zero",
  "proc",
  "etc",
  "root",
  "dangling",
  "x",
  "big",
  "edge",
  "latin1",
  "overlong",
  "bom",
  "empty",
  "noperm",
  "pipe",
  "sock",
  "secret",
  "user-evil",
  "user",
  "workspace",
  "ws-real",
  "ws",
  "builtin",
  "home",
  "team",
  "review_2",
  "default",
  "a",
  "b",
  "c",
  "deep",
  "passwd",
  "missing",
] as const;
const PREFIXES = ["$insomnia/", "$user/", "$workspace/", ""] as const;
const TRICKS = [
  // traversal
  "..",
  ".",
  "...",
  "../",
  "./",
  "..\\",
  ".%2e",
  "%2e.",
  ".. ",
  " ..",
  "..;",
  "..\t",
  // percent and other encodings
  "%2e%2e",
  "%2E%2E",
  "%2f",
  "%2F",
  "%5c",
  "%252e%252e",
  "%c0%ae",
  "%c0%af",
  "%e0%80%ae",
  "%u002e",
  "&#46;",
  "\\x2e",
  "\\u002e",
  // overlong UTF-8 read as Latin-1, replacement char, lookalike dots and slashes
  "\u00c0\u00ae",
  "\u00c0\u00af",
  "\ufffd",
  "\uff0e",
  "\u2024",
  "\u2025",
  "\ufe52",
  "\u3002",
  "\uff0f",
  "\u2215",
  "\u2044",
  "\u29f8",
  "\uff3c",
  // unicode that normalizes or hides: fullwidth letters, combining, zero-width, bidi, BOM, lone surrogates, emoji
  "\uff4f\uff4b",
  "o\u0301k",
  "\u200b",
  "\u200d",
  "\u202e",
  "\u2066",
  "\ufeff",
  "\ud800",
  "\udfff",
  "\ud83d\ude00",
  "\u0130",
  "\u017f",
  "\u212a",
  // separators, drive letters, UNC, URLs, home, variables
  "\\",
  "/",
  "//",
  "\\\\?\\C:\\",
  "\\\\server\\share",
  "//server/share",
  "C:",
  "c:/",
  "C:..",
  "Z:\\",
  "file://",
  "~",
  "~root",
  "$HOME",
  // NUL and control characters, whitespace
  "\0",
  "\0.md",
  "\u0001",
  "\u001f",
  "\u007f",
  "\n",
  "\r\n",
  "\t",
  " ",
  "\u00a0",
  // suffixes and prefixes
  ".md",
  ".MD",
  ".md\0",
  ":$DATA",
  "::$INDEX_ALLOCATION",
  "$",
  "$$",
  "$user",
  "$USER/",
  "$User/",
  "$workspace",
  "$WORKSPACE/",
  "$insomnia",
  "$Insomnia/",
  "$foo/",
  "$/",
  "$user\\",
  "$user:",
  "$user//",
  "$insomnia/$user/",
  "_",
  "-",
  "_x",
  "-x",
] as const;

const nameArb = fc.constantFrom(...NAMES);
const trickArb = fc.constantFrom(...TRICKS);
const unicodeArb = fc.string({ unit: "binary", minLength: 1, maxLength: 4 });
const tokenArb = fc.oneof(
  { weight: 5, arbitrary: nameArb },
  { weight: 4, arbitrary: fc.constant("/") },
  { weight: 4, arbitrary: trickArb },
  { weight: 1, arbitrary: unicodeArb },
);

/** A case: the raw reference, an optional current file for relative resolution, or a forged PromptRef. */
interface Case {
  raw: string;
  current?: string | undefined;
  forged?: { prefix: string; path: string } | undefined;
  partial?: boolean | undefined;
}

const prefixArb = fc.constantFrom(...PREFIXES);
// Plausible paths through the fixture, so a large share of cases reaches the file system.
const walkArb = fc
  .tuple(prefixArb, fc.array(nameArb, { minLength: 1, maxLength: 4, depthIdentifier: "walk" }))
  .map(([prefix, segs]) => prefix + segs.join("/"));
/** Paths that exist in some root: files, traps and links, under a random prefix. */
const KNOWN = [
  "ok",
  "OK",
  "dir/ok",
  "dir/inner",
  "dir/up/ok",
  "dir/upup/user/ok",
  "dir/upup/secret",
  "a/b/c/deep",
  "team/review_2",
  "default",
  "edge",
  "bom",
  "empty",
  "noperm",
  "ws",
  "user/ok",
  "up/secret",
  "up/user/ok",
  "link-out",
  "abs-out",
  "dir-out/secret",
  "abs-dir-out/secret",
  "sib/ok",
  "sib/secret",
  "ssh/id_rsa",
  "id_rsa",
  "loop",
  "loop2a",
  "loopdir/x",
  "dev",
  "zero",
  "proc",
  "etc",
  "root/etc/passwd",
  "dangling",
  "x",
  "big",
  "latin1",
  "overlong",
  "pipe",
  "sock",
  "secret",
] as const;
const knownArb = fc
  .tuple(fc.constantFrom("$insomnia/", "$user/", "$user/", "$workspace/"), fc.constantFrom(...KNOWN))
  .map(([p, k]) => p + k);
const trickyArb = fc
  .tuple(prefixArb, fc.array(tokenArb, { minLength: 1, maxLength: 10 }))
  .map(([prefix, tokens]) => prefix + tokens.join(""));
const randomArb = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.tuple(prefixArb, fc.string({ unit: "binary", maxLength: 40 })).map(([p, s]) => p + s),
  fc.tuple(prefixArb, fc.string({ unit: "binary-ascii", maxLength: 40 })).map(([p, s]) => p + s),
);
/** Around and far over the length and segment limits, and 200-deep `a/../` chains. */
const longArb = fc.oneof(
  fc
    .tuple(prefixArb, fc.integer({ min: MAX_REF_LENGTH - 12, max: MAX_REF_LENGTH + 4 }))
    .map(([p, n]) => p + "a".repeat(Math.max(1, n - p.length))),
  fc
    .tuple(prefixArb, fc.integer({ min: MAX_REF_SEGMENTS - 2, max: MAX_REF_SEGMENTS + 2 }))
    .map(([p, n]) => p + Array(n).fill("a").join("/")),
  fc.tuple(prefixArb, fc.integer({ min: 1, max: 200 })).map(([p, n]) => `${p + "a/../".repeat(n)}ok`),
  fc.tuple(prefixArb, fc.integer({ min: 1, max: 200 })).map(([p, n]) => `${p + "../".repeat(n)}secret`),
  fc.tuple(prefixArb, fc.integer({ min: 1, max: 40 })).map(([p, n]) => `${p + "dir/up/".repeat(n)}ok`),
  fc.integer({ min: 1_000, max: 20_000 }).map((n) => `$user/${"x".repeat(n)}`),
);
const CURRENTS = [
  "$user/dir/ok",
  "$user/sib/x",
  "$user/dir/up/ok",
  "$workspace/ok",
  "$workspace/team/review_2",
  "$insomnia/default",
  "$insomnia/user/ok",
  `$user/${Array(MAX_REF_SEGMENTS - 1)
    .fill("d")
    .join("/")}/x`,
  `$user/${"z".repeat(MAX_REF_LENGTH - 8)}`,
] as const;
const currentArb = fc.option(fc.constantFrom(...CURRENTS), { nil: undefined, freq: 4 });
const forgedArb = fc
  .tuple(
    fc.constantFrom("$insomnia", "$user", "$workspace", "$foo", "", "$user/..", "$USER"),
    fc.oneof(
      walkArb.map((w) => w.replace(/^\$[a-z]+\//, "")),
      trickyArb,
      fc.constantFrom("../secret", "..", "/etc/passwd", "dir/../../secret", "ok\0", "ok.md"),
    ),
  )
  .map(([prefix, path]) => ({ prefix, path }));

/** One case in ten goes to the loader without a $user root and with a missing $workspace root. */
const rarely = fc.integer({ min: 0, max: 9 }).map((n) => n === 0);

const caseArb: fc.Arbitrary<Case> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ raw: walkArb, current: currentArb, partial: rarely }, { requiredKeys: ["raw"] }),
  },
  { weight: 4, arbitrary: fc.record({ raw: knownArb, partial: rarely }, { requiredKeys: ["raw"] }) },
  { weight: 8, arbitrary: fc.record({ raw: trickyArb, current: currentArb }, { requiredKeys: ["raw"] }) },
  { weight: 2, arbitrary: fc.record({ raw: randomArb, current: currentArb }, { requiredKeys: ["raw"] }) },
  { weight: 1, arbitrary: fc.record({ raw: longArb, current: currentArb }, { requiredKeys: ["raw"] }) },
  { weight: 1, arbitrary: forgedArb.map((forged) => ({ raw: `${forged.prefix}/${forged.path}`, forged })) },
);

// ---- checks -----------------------------------------------------------------------------

/** Fails the case with `what` unless `ok`; plain code because it runs 100,000 times (expect is slow). */
function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

/** Checks a thrown value is a documented PromptLoaderError with its position. */
function checkError(error: unknown, raw: string): PromptLoaderError {
  if (!PromptLoaderError.is(error)) throw error;
  const e = error;
  check(CODES.has(e.code), () => `undocumented code ${e.code}`);
  check(!e.message.includes(SECRET), () => `message leaks the secret: ${e.message}`);
  if (INDEX_CODES.has(e.code)) {
    check(
      typeof e.index === "number" && e.index >= 0 && e.index <= raw.length,
      () => `${e.code} index ${e.index} outside ${raw.length}`,
    );
  }
  if (FILE_CODES.has(e.code))
    check(e.file?.startsWith("/") === true, () => `${e.code} without an absolute file: ${e.file}`);
  return e;
}

function count(outcome: PromptLoaderError | "ok"): void {
  if (outcome === "ok") {
    counts.correct += 1;
    counts.byCode.set("ok", (counts.byCode.get("ok") ?? 0) + 1);
    return;
  }
  counts.typedErrors += 1;
  if (typeof outcome.code === "string" && CODES.has(outcome.code)) counts.withCode += 1;
  if (
    (INDEX_CODES.has(outcome.code) && outcome.index !== undefined) ||
    (FILE_CODES.has(outcome.code) && outcome.file !== undefined)
  ) {
    counts.withPosition += 1;
  }
  counts.byCode.set(outcome.code, (counts.byCode.get(outcome.code) ?? 0) + 1);
}

/** A PromptRef is only correct when it matches the grammar, on its own terms (not parseRef's). */
function checkRef(ref: PromptRef): void {
  check(
    GRAMMAR.test(ref.canonical) &&
      ref.canonical === `${ref.prefix}/${ref.path}` &&
      ref.canonical.length <= MAX_REF_LENGTH &&
      ref.path.split("/").length <= MAX_REF_SEGMENTS,
    () => `parseRef returned a reference outside the grammar: ${JSON.stringify(ref)}`,
  );
}

const realRoots = new Map<string, string>();
function realRoot(using: PromptLoader, prefix: PromptPrefix): string {
  const root = using.rootOf(prefix) ?? "";
  let real = realRoots.get(root);
  if (real === undefined) {
    real = realpathSync(root);
    realRoots.set(root, real);
  }
  return real;
}

function normalize(bytes: Buffer): string {
  const text = bytes.toString("utf8");
  return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, "\n");
}

async function runCase(c: Case): Promise<void> {
  counts.cases += 1;
  const using = c.partial === true ? partialLoader : loader;
  // parseRef, exactly as an include would call it.
  let parsed: PromptRef | undefined;
  let parseError: PromptLoaderError | undefined;
  counts.parsed += 1;
  try {
    parsed = c.current === undefined ? parseRef(c.raw) : parseRef(c.raw, parseRef(c.current));
    checkRef(parsed);
    // A qualified reference that parses names exactly itself.
    const canonical = parsed.canonical;
    if (c.raw.startsWith("$")) check(canonical === c.raw, () => `${JSON.stringify(c.raw)} parsed as ${canonical}`);
  } catch (error) {
    parseError = checkError(error, c.raw);
    const code = parseError.code;
    check(PARSE_CODES.has(code), () => `parseRef threw ${code}`);
    // The grammar is the whole truth: a qualified reference inside it must never be refused.
    if (c.raw.length <= MAX_REF_LENGTH && GRAMMAR.test(c.raw) && c.raw.split("/").length - 1 <= MAX_REF_SEGMENTS) {
      throw new Error(`parseRef refused a valid reference ${JSON.stringify(c.raw)}: ${parseError.message}`);
    }
  }
  // load: a forged object, the parsed ref, or the raw string (which must fail like parseRef did).
  counts.loaded += 1;
  const target: PromptRef | string =
    c.forged !== undefined ? (c.forged as unknown as PromptRef) : parsed !== undefined ? parsed : c.raw;
  let outcome: PromptLoaderError | "ok";
  try {
    const loaded = await using.load(target);
    if (parseError !== undefined) throw new Error(`load accepted ${JSON.stringify(c.raw)}, which parseRef refused`);
    checkRef(loaded.ref);
    const root = realRoot(using, loaded.ref.prefix);
    const inside = loaded.file.startsWith(`${root}/`) && loaded.file.length > root.length + 1;
    if (!inside || loaded.text.includes(SECRET)) {
      counts.outsideRoot += 1;
      throw new Error(`${JSON.stringify(c.raw)} read ${loaded.file}, outside ${root}`);
    }
    // The file is the one the reference names (symlinks inside the root followed), read whole.
    const named = realpathSync(`${join(using.rootOf(loaded.ref.prefix) ?? "", ...loaded.ref.path.split("/"))}.md`);
    check(loaded.file === named, () => `${loaded.ref.canonical} loaded ${loaded.file}, not ${named}`);
    check(loaded.text === normalize(readFileSync(loaded.file)), () => `${loaded.file}: text differs from the file`);
    check(
      loaded.sha256 === createHash("sha256").update(loaded.text, "utf8").digest("hex"),
      () => `${loaded.file}: wrong sha256`,
    );
    outcome = "ok";
  } catch (error) {
    const e = checkError(error, c.raw);
    const p = parseError;
    if (p !== undefined && c.current === undefined) {
      // load parses exactly like parseRef without a current file, forged objects included.
      check(
        e.code === p.code && e.index === p.index,
        () => `load threw ${e.code}@${e.index}, parseRef ${p.code}@${p.index}`,
      );
    }
    check(
      p !== undefined || !PARSE_CODES.has(e.code),
      () => `load refused the parsed ${JSON.stringify(c.raw)} with ${e.code}`,
    );
    outcome = e;
  }
  count(outcome);
}

describe("prompt references under hostile input", () => {
  it("one_hundred_thousand_references_never_read_outside_their_root", async () => {
    const { printed, rejections } = await guarded(async () => {
      await fc.assert(fc.asyncProperty(caseArb, runCase), {
        seed: SEED,
        numRuns: RUNS,
        endOnFailure: true,
        examples: [
          [{ raw: "$user/link-out" }],
          [{ raw: "$user/abs-dir-out/secret" }],
          [{ raw: "$user/dir/upup/secret" }],
          [{ raw: "$user/ssh/id_rsa" }],
          [{ raw: "$user/pipe" }],
          [{ raw: "$user/zero" }],
          [{ raw: "$user/big" }],
          [{ raw: "$user/latin1" }],
          [{ raw: "$user/loop" }],
          [{ raw: "$user/x" }],
          [{ raw: "$user/bom" }],
          [{ raw: "link-out", current: "$workspace/ok" }],
          [{ raw: "$user/ok", partial: true }],
          [{ raw: "$workspace/ok", partial: true }],
          [{ raw: "$user/../secret", forged: { prefix: "$user", path: "../secret" } }],
          [{ raw: `$user/${"a/../".repeat(200)}ok` }],
          [{ raw: `$user/${"x".repeat(1_000_000)}` }],
          [{ raw: "C:\\Windows\\win.ini" }],
          [{ raw: "$user/ok\0.md" }],
        ],
      });
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.cases).toBe(RUNS);
    expect(counts.parsed).toBe(counts.cases);
    expect(counts.loaded).toBe(counts.cases);
    expect(counts.outsideRoot).toBe(0);
    expect(counts.typedErrors + counts.correct).toBe(counts.cases);
    expect(counts.withCode).toBe(counts.typedErrors);
    // The run is not vacuous: every way to fail and to succeed was reached.
    for (const code of [
      "ok",
      "INVALID_REF",
      "UNKNOWN_PREFIX",
      "UNQUALIFIED_WITHOUT_CURRENT",
      "PREFIX_NOT_CONFIGURED",
      "NOT_FOUND",
      "PATH_ESCAPE",
      "NOT_A_FILE",
      "TOO_LARGE",
      "BAD_ENCODING",
    ]) {
      expect([code, counts.byCode.get(code) ?? 0]).not.toEqual([code, 0]);
    }
  });
});

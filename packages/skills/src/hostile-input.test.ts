import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isStrictlyInside } from "@insomnia/safe-read";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import { guarded } from "../../../test/support/output-guard.ts";
import { discoverSkills } from "./discover-skills.ts";
import { isValidSkillName, MAX_SKILL_DESCRIPTION_LENGTH, parseSkill } from "./parse-skill.ts";
import type { SkillsErrorCode, SkillWarning } from "./skills-error.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// 8,000 generated SKILL.md texts parsed in memory and 2,500 generated skill trees on disk
// (nesting, symlinks out of the root and into loops, FIFOs, devices, bad bytes, oversized
// files, hostile frontmatter). Every case ends in correct catalog entries or coded,
// positioned warnings; nothing is read from outside a root, nothing hangs, prints or throws.

const SEED = 0x5c11_0014;
const TEXT_RUNS = Number(process.env.SKILLS_TEXT_RUNS ?? propertyRuns(200, 8_000));
const TREE_RUNS = Number(process.env.SKILLS_TREE_RUNS ?? propertyRuns(50, 2_500));
const SECRET = "TOPSECRET-5k1ll never in a catalog";

const CODES: ReadonlySet<SkillsErrorCode> = new Set([
  "SKILL_NO_FRONTMATTER",
  "SKILL_BAD_FRONTMATTER",
  "SKILL_BAD_NAME",
  "SKILL_NAME_MISMATCH",
  "SKILL_BAD_DESCRIPTION",
  "SKILL_BAD_FIELD",
  "SKILL_TOO_LARGE",
  "SKILL_NOT_UTF8",
  "SKILL_OUTSIDE_ROOT",
  "SKILL_OUTSIDE_SCOPE",
  "SKILL_NOT_A_FILE",
  "SKILL_UNREADABLE",
  "SKILLS_ROOT_OUTSIDE_SCOPE",
  "SKILLS_ROOT_UNREADABLE",
  "SKILLS_TOO_MANY_DIRS",
  "SKILLS_TOO_DEEP",
]);
const POSITIONED: ReadonlySet<SkillsErrorCode> = new Set([
  "SKILL_NO_FRONTMATTER",
  "SKILL_BAD_FRONTMATTER",
  "SKILL_BAD_NAME",
  "SKILL_NAME_MISMATCH",
  "SKILL_BAD_DESCRIPTION",
  "SKILL_BAD_FIELD",
  "SKILL_NOT_UTF8",
]);

const counts = { texts: 0, trees: 0, entries: 0, warnings: 0, byCode: new Map<string, number>() };

function checkWarning(warning: SkillWarning, text?: string): void {
  expect(CODES.has(warning.code), warning.code).toBe(true);
  expect(warning.message.length).toBeGreaterThan(0);
  expect(warning.message.includes(SECRET)).toBe(false);
  if (POSITIONED.has(warning.code)) {
    expect(warning.line).toBeGreaterThanOrEqual(1);
    expect(warning.column).toBeGreaterThanOrEqual(1);
    if (text !== undefined) expect(warning.line!).toBeLessThanOrEqual(text.split("\n").length + 1);
  }
  counts.warnings++;
  counts.byCode.set(warning.code, (counts.byCode.get(warning.code) ?? 0) + 1);
}

// ---- generators -------------------------------------------------------------------------

const nameArb = fc.oneof(
  fc.constantFrom("review", "Review", "-x", "x-", "a--b", "", "review ", "rév", "a".repeat(65), "a".repeat(64), "x"),
  fc.stringMatching(/^[a-z0-9-]{1,12}$/),
  fc.string({ maxLength: 12 }),
);
const scalarArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ maxLength: 40, unit: "grapheme" }),
  fc.constantFrom(
    "&a x",
    "*a",
    "!!str x",
    "!custom x",
    "[unclosed",
    "{a: 1}",
    "[1, 2]",
    "~",
    "null",
    "true",
    "12",
    "0x1f",
    '"a\\u0000b"',
    '"\\u2028"',
    ">\n  folded\n  text",
    "|\n  literal\n\n  text",
    `"${"d".repeat(MAX_SKILL_DESCRIPTION_LENGTH + 1)}"`,
    `"${"é".repeat(MAX_SKILL_DESCRIPTION_LENGTH)}"`,
    "'---'",
    "<<: {a: 1}",
  ),
);
const keyArb = fc.constantFrom(
  "name",
  "description",
  "brain-recall-only",
  "disable-model-invocation",
  "license",
  "metadata",
  "__proto__",
  "constructor",
  "<<",
  "? complex",
  "%YAML 1.1",
  "- item",
  "",
);
const lineArb = fc.oneof(
  fc.tuple(keyArb, scalarArb).map(([k, v]) => `${k}: ${v}`),
  fc.tuple(nameArb).map(([n]) => `name: ${n}`),
  fc.constantFrom("---", "...", "  nested: x", "\t", "# comment", "&anchor", "name: review", "description: Does it."),
  fc.string({ maxLength: 30 }),
);
const textArb = fc
  .record({
    open: fc.constantFrom("---\n", "---\r\n", "--- \n", "\ufeff---\n", "", "----\n", "--\n"),
    lines: fc.array(lineArb, { maxLength: 8 }),
    close: fc.constantFrom("---\n", "---", "", "...\n", "--- \n"),
    body: fc.string({ maxLength: 60 }),
    crlf: fc.boolean(),
  })
  .map(({ open, lines, close, body, crlf }) => {
    const text = `${open}${lines.join("\n")}${lines.length > 0 ? "\n" : ""}${close}${body}`;
    return crlf ? text.replace(/\n/g, "\r\n") : text;
  });

/** Mostly valid skills (so the suite also checks correct entries), with hostile descriptions. */
const goodTextArb = fc
  .record({
    description: fc.oneof(
      fc.string({ minLength: 1, maxLength: 80, unit: "grapheme" }),
      fc.constantFrom("Does it.", "line\\nbreak", "a: b", "# not a comment", "---", "- item", `${SECRET.slice(0, 3)}`),
    ),
    hidden: fc.constantFrom("", "brain-recall-only: true\n", "disable-model-invocation: false\n"),
    body: fc.string({ maxLength: 40 }),
  })
  .map(
    ({ description, hidden, body }) =>
      (name: string) =>
        `---\nname: ${name}\ndescription: ${JSON.stringify(description)}\n${hidden}---\n${body}`,
  );

// ---- trees ------------------------------------------------------------------------------

const base = realpathSync(mkdtempSync(join(tmpdir(), "insomnia-skills-hostile-")));
const outside = join(base, "outside");
mkdirSync(join(outside, "stolen"), { recursive: true });
writeFileSync(join(outside, "stolen", "SKILL.md"), `---\nname: stolen\ndescription: ${SECRET}\n---\n${SECRET}\n`);
writeFileSync(join(outside, "secret.md"), `---\nname: secret\ndescription: ${SECRET}\n---\n`);
const fifo = join(outside, "fifo");
execFileSync("mkfifo", [fifo]);
afterAll(() => {
  rmSync(base, { recursive: true, force: true });
  const codes = [...counts.byCode.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([c, n]) => `${c} ${n}`);
  console.log(
    `[hostile-input] @insomnia/skills (seed ${SEED}): ${counts.texts} texts, ${counts.trees} trees; ` +
      `${counts.entries} correct entries, ${counts.warnings} coded warnings; ${codes.join(", ")}`,
  );
});

type Node =
  | { kind: "good"; make: (name: string) => string }
  | { kind: "skill"; text: string; fileName: "SKILL.md" | "skill.md" }
  | { kind: "bytes"; bytes: number[] }
  | { kind: "big" }
  | { kind: "link-out-dir" }
  | { kind: "link-out-file" }
  | { kind: "link-fifo" }
  | { kind: "link-dev" }
  | { kind: "link-loop" }
  | { kind: "link-dangling" }
  | { kind: "skill-is-dir" };

const nodeArb: fc.Arbitrary<Node> = fc.oneof(
  { weight: 8, arbitrary: goodTextArb.map((make) => ({ kind: "good" as const, make })) },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("skill" as const),
      text: textArb,
      fileName: fc.constantFrom("SKILL.md" as const, "SKILL.md" as const, "skill.md" as const),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bytes" as const),
      bytes: fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 40 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom<Node>(
      { kind: "big" },
      { kind: "link-out-dir" },
      { kind: "link-out-file" },
      { kind: "link-fifo" },
      { kind: "link-dev" },
      { kind: "link-loop" },
      { kind: "link-dangling" },
      { kind: "skill-is-dir" },
    ),
  },
);
const entryArb = fc.record({
  path: fc.array(fc.oneof(fc.stringMatching(/^[a-z0-9-]{1,6}$/), fc.constantFrom(".git", "review", "x", "a b", "UP")), {
    minLength: 1,
    maxLength: 5,
  }),
  node: nodeArb,
});
const treeArb = fc.record({
  entries: fc.array(entryArb, { maxLength: 6 }),
  rootLinkedOut: fc.boolean(),
  root: fc.constantFrom("workspace", "user"),
});

/** Writes a new file only ("wx"): a later entry must never write through an earlier entry's link to the FIFO. */
function writeNew(file: string, data: string | Uint8Array): void {
  writeFileSync(file, data, { flag: "wx" });
}

type Tree = typeof treeArb extends fc.Arbitrary<infer T> ? T : never;

let treeNumber = 0;
function buildTree(tree: Tree): {
  cwd: string;
  rootDir: string;
} {
  const dir = join(base, `t${treeNumber++}`);
  const cwd = join(dir, "pod");
  const rootDir = tree.root === "workspace" ? join(cwd, ".insomnia", "skills") : join(dir, "xdg", "insomnia", "skills");
  mkdirSync(rootDir, { recursive: true });
  for (const { path, node } of tree.entries) {
    const skillDir = join(rootDir, ...path);
    try {
      mkdirSync(skillDir, { recursive: true });
      const file = join(skillDir, node.kind === "skill" ? node.fileName : "SKILL.md");
      switch (node.kind) {
        case "good":
          writeNew(file, node.make(path.at(-1) ?? "x"));
          break;
        case "skill":
          writeNew(file, node.text);
          break;
        case "bytes":
          writeNew(
            file,
            Buffer.concat([
              Buffer.from("---\nname: x\ndescription: "),
              Buffer.from(node.bytes),
              Buffer.from("\n---\n"),
            ]),
          );
          break;
        case "big":
          writeNew(file, `---\nname: x\ndescription: big\n---\n${"b".repeat(64 * 1024 + 1)}`);
          break;
        case "link-out-dir":
          symlinkSync(join(outside, "stolen"), join(skillDir, "stolen"));
          break;
        case "link-out-file":
          symlinkSync(join(outside, "secret.md"), file);
          break;
        case "link-fifo":
          symlinkSync(fifo, file);
          break;
        case "link-dev":
          symlinkSync("/dev/zero", file);
          break;
        case "link-loop":
          symlinkSync(rootDir, join(skillDir, "loop"));
          symlinkSync(join(skillDir, "self"), join(skillDir, "self"));
          break;
        case "link-dangling":
          symlinkSync(join(dir, "nowhere"), file);
          break;
        case "skill-is-dir":
          mkdirSync(file, { recursive: true });
          break;
      }
    } catch {
      // Two entries can collide (a file where a directory goes); the tree is just different.
    }
  }
  if (tree.rootLinkedOut && tree.root === "workspace") {
    rmSync(rootDir, { recursive: true, force: true });
    symlinkSync(outside, rootDir);
  }
  return { cwd, rootDir };
}

describe("skills under hostile input", () => {
  it("generated_frontmatter_gives_a_correct_entry_or_coded_positioned_warnings", async () => {
    const { printed, rejections } = await guarded(() => {
      fc.assert(
        fc.property(
          fc.oneof(
            textArb.map((text) => ({ text, good: false })),
            goodTextArb.map((make) => ({ text: make("review"), good: true })),
          ),
          fc.constantFrom("review", "review", "x", "a b"),
          ({ text }, dirName) => {
            counts.texts++;
            const normalized = text.replace(/^\ufeff/, "").replace(/\r\n?/g, "\n");
            const result = parseSkill(normalized, { file: "/r/SKILL.md", dirName });
            if (result.ok) {
              counts.entries++;
              expect(isValidSkillName(result.skill.name)).toBe(true);
              expect(result.skill.name).toBe(dirName);
              expect(result.skill.description.length).toBeGreaterThan(0);
              expect(Array.from(result.skill.description).length).toBeLessThanOrEqual(MAX_SKILL_DESCRIPTION_LENGTH);
              expect(/[\n\r\u0000]/.test(result.skill.description)).toBe(false);
              expect(result.skill.description).toBe(result.skill.description.trim());
            } else {
              expect(result.warnings.length).toBeGreaterThan(0);
              for (const warning of result.warnings) {
                expect(warning.file).toBe("/r/SKILL.md");
                checkWarning(warning, normalized);
              }
            }
          },
        ),
        { seed: SEED, numRuns: TEXT_RUNS, endOnFailure: true },
      );
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.texts).toBe(TEXT_RUNS);
  });

  it("generated_trees_never_read_outside_their_root_never_hang_never_throw", async () => {
    const { printed, rejections } = await guarded(() => {
      fc.assert(
        fc.property(treeArb, (tree) => {
          counts.trees++;
          const { cwd, rootDir } = buildTree(tree);
          const catalog = discoverSkills({
            cwd,
            env: { HOME: join(cwd, "..", "home"), XDG_CONFIG_HOME: join(cwd, "..", "xdg") },
            limits: { maxDepth: 4, maxDirs: 12, maxBytes: 64 * 1024 },
          });
          const realRoot = realpathSync(rootDir);
          for (const skill of catalog.skills) {
            counts.entries++;
            expect(isStrictlyInside(realRoot, skill.file) || skill.root === "user").toBe(true);
            expect(isStrictlyInside(skill.rootDir, skill.file)).toBe(true);
            expect(isStrictlyInside(outside, skill.file)).toBe(false);
            expect(skill.description.includes(SECRET)).toBe(false);
            expect(isValidSkillName(skill.name)).toBe(true);
          }
          for (const warning of catalog.warnings) checkWarning(warning);
          const names = catalog.skills.map((s) => s.name);
          expect(names).toEqual([...new Set(names)].sort());
          rmSync(join(cwd, ".."), { recursive: true, force: true });
        }),
        { seed: SEED, numRuns: TREE_RUNS, endOnFailure: true },
      );
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.trees).toBe(TREE_RUNS);
    expect(counts.texts + counts.trees).toBeGreaterThanOrEqual(TEXT_RUNS + TREE_RUNS);
  });
});

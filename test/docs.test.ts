import { readFileSync } from "node:fs";
import { constants } from "node:os";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { COMMAND_NAMES, COMMAND_OPTIONS } from "../packages/cli/src/args.ts";
import { type DocMention, docFiles, docMentions, knownNames } from "./support/doc-mentions.ts";

// The truth is the bin's own tables (args.ts) and the codes and names declared in the
// packages' sources, so a command, flag or code added on another branch is known here as
// soon as it exists in code, and a doc naming one that does not exist fails.
const repoRoot = join(import.meta.dirname, "..");
const GLOBAL_FLAGS = new Set(["--help", "--version"]);
const commands = new Set<string>([...COMMAND_NAMES, "help"]);
const flagsOf = (command: string): Set<string> =>
  new Set([
    ...GLOBAL_FLAGS,
    ...Object.keys((COMMAND_OPTIONS as Record<string, Record<string, unknown>>)[command] ?? {}).map((f) => `--${f}`),
  ]);
const allFlags = new Set([...GLOBAL_FLAGS, ...COMMAND_NAMES.flatMap((c) => [...flagsOf(c)])]);

function where(m: DocMention): string {
  return `${m.file}:${m.line}: ${m.text}`;
}

describe("docs name only what the pod bin has", () => {
  const mentions = docFiles().flatMap((file) => docMentions(file));
  const known = knownNames();
  const errno = new Set(Object.keys(constants.errno));

  test("docs_found", () => {
    // A guard against the scan silently finding nothing (a moved docs folder, a changed fence style).
    expect(mentions.filter((m) => m.kind === "command").length).toBeGreaterThan(50);
    expect(mentions.filter((m) => m.kind === "code").length).toBeGreaterThan(50);
  });

  test("every_pod_command_in_the_docs_exists", () => {
    const wrong = mentions.filter((m) => m.kind === "command" && !commands.has(m.name)).map(where);
    expect(wrong).toEqual([]);
  });

  test("every_pod_flag_in_the_docs_belongs_to_its_command", () => {
    const wrong = mentions
      .filter((m) => m.kind === "flag")
      .filter((m) => !(m.command === undefined ? allFlags : flagsOf(m.command)).has(m.name))
      .map((m) => `${where(m)} (${m.name}${m.command === undefined ? "" : ` of pod ${m.command}`})`);
    expect(wrong).toEqual([]);
  });

  test("every_error_code_in_the_docs_exists", () => {
    const wrong = mentions
      .filter((m) => m.kind === "code" && !known.codes.has(m.name) && !known.names.has(m.name) && !errno.has(m.name))
      .map((m) => `${where(m)} (${m.name})`);
    expect(wrong).toEqual([]);
  });

  test("the_scan_catches_a_made_up_command_flag_and_code", () => {
    const fake = docMentions("fake.md", "Run `pod frobnicate`, `pod run --colour` and expect `NOT_A_REAL_CODE`.\n");
    expect(fake.map((m) => `${m.kind}:${m.name}`)).toEqual([
      "command:frobnicate",
      "command:run",
      "flag:--colour",
      "code:NOT_A_REAL_CODE",
    ]);
    expect(known.codes.has("NOT_A_REAL_CODE")).toBe(false);
    expect(flagsOf("run").has("--colour")).toBe(false);
  });
});

describe("the pod README covers the package", () => {
  const readme = readFileSync(join(repoRoot, "packages", "pod", "README.md"), "utf8");
  const report = readFileSync(join(repoRoot, "packages", "pod", "api", "pod.api.md"), "utf8");

  test("pod_readme_public_surface_names_every_export", () => {
    const surface = readme.slice(readme.indexOf("That is the whole public surface"), readme.indexOf("## Reading"));
    const exports = [
      ...report.matchAll(/^export (?:declare )?(?:abstract )?(?:class|function|const|type|interface) (\w+)/gm),
    ];
    const missing = exports.map((m) => m[1]!).filter((name) => !surface.includes(`\`${name}\``));
    expect(exports.length).toBeGreaterThan(20);
    expect(missing).toEqual([]);
  });

  test("pod_readme_error_tables_name_every_code_a_pod_throws", () => {
    const errors = readme.slice(readme.indexOf("## Errors"), readme.indexOf("## Warnings"));
    const unions = ["pod/src/pod-error.ts", "segment-store/src/segment-store-error.ts", "worker/src/worker-error.ts"];
    const codes = unions.flatMap((file) => [
      ...readFileSync(join(repoRoot, "packages", file), "utf8").matchAll(/^\s*\| "([A-Z_]+)"|Code =\s*"([A-Z_]+)"/gm),
    ]);
    const missing = codes.map((m) => (m[1] ?? m[2])!).filter((code) => !errors.includes(`\`${code}\``));
    expect(codes.length).toBeGreaterThan(15);
    expect(missing).toEqual([]);
  });
});

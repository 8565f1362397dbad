import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";

const repoRoot = join(import.meta.dirname, "..", "..");

/** A `pod` command, a flag or an error code named by a doc, with where. */
export interface DocMention {
  kind: "command" | "flag" | "code";
  name: string;
  /** The command a flag was written after, when it was. */
  command?: string;
  file: string;
  line: number;
  text: string;
}

/** The docs the test guards: docs/*.md, the root README, every package's and example's README. */
export function docFiles(): string[] {
  const files = [join(repoRoot, "README.md")];
  const docs = join(repoRoot, "docs");
  for (const name of readdirSync(docs)) if (name.endsWith(".md")) files.push(join(docs, name));
  for (const parent of ["packages", "examples"]) {
    const dir = join(repoRoot, parent);
    if (!existsSync(dir)) continue;
    if (existsSync(join(dir, "README.md"))) files.push(join(dir, "README.md"));
    for (const name of readdirSync(dir)) {
      const readme = join(dir, name, "README.md");
      if (existsSync(readme)) files.push(readme);
    }
  }
  return files;
}

// Error codes and environment variables look alike: upper case words joined by underscores.
const CODE_SHAPE = /\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b/g;
const FLAG = /(?:^|[\s[(|,])(--[a-z][a-z0-9-]*)/g;
// A command line in a code block: `$ pod …`, `Usage: pod …`, `pnpm pod …`, or a line that starts with `pod `.
const FENCED_COMMAND = /(?:^\s*|\$\s+|Usage:\s+|\bpnpm\s+(?:-s\s+)?)pod\s+(\S+)(.*)$/;
const SPAN_COMMAND = /^(?:\$\s+)?pod\s+(\S+)(.*)$/s;

/** Files whose bare flags (`--store` alone in backticks) are `pod` flags. */
function isAboutPod(file: string): boolean {
  return /(?:docs\/cli\.md|packages\/cli\/README\.md)$/.test(file);
}

function commandMentions(word: string, rest: string, at: Omit<DocMention, "kind" | "name">): DocMention[] {
  const out: DocMention[] = [];
  let command: string | undefined;
  let flags = rest;
  if (word.startsWith("-")) flags = `${word} ${rest}`;
  else if (/^[a-z][a-z0-9-]*$/.test(word)) {
    command = word === "help" ? undefined : word;
    out.push({ ...at, kind: "command", name: word });
  } else if (!/^[<[]/.test(word)) return out; // not a command line (`pod:`, `pod.yaml`)
  // A shell comment after the command is prose.
  const args = flags.split(/\s#\s/)[0] ?? "";
  for (const match of args.matchAll(FLAG)) {
    out.push({ ...at, kind: "flag", name: match[1]!, ...(command === undefined ? {} : { command }) });
  }
  return out;
}

function codeMentions(text: string, at: Omit<DocMention, "kind" | "name">): DocMention[] {
  // `${NAME}` is a variable another tool expands (an .npmrc, a shell), not ours.
  return [...text.matchAll(CODE_SHAPE)]
    .filter((m) => text.slice(Math.max(0, (m.index ?? 0) - 2), m.index) !== "${")
    .map((m) => ({ ...at, kind: "code", name: m[0] }));
}

/** Every command, flag and code `file` names in code (inline spans and fenced blocks). */
export function docMentions(file: string, text = readFileSync(file, "utf8")): DocMention[] {
  const shown = relative(repoRoot, file) || file;
  const out: DocMention[] = [];
  let fence: string | undefined;
  let fenceLanguage: string | undefined;
  const lines = text.split("\n");
  lines.forEach((raw, index) => {
    const at = { file: shown, line: index + 1, text: raw.trim().slice(0, 160) };
    const opening = /^\s*(```+|~~~+)/.exec(raw);
    if (opening !== null) {
      if (fence === undefined) {
        fence = opening[1];
        fenceLanguage = /^\s*(?:```+|~~~+)\s*(\w+)/.exec(raw)?.[1]?.toLowerCase().replace(/^yml$/, "yaml");
      } else if (raw.trim().startsWith(fence)) fence = undefined;
      return;
    }
    // A YAML block is a manifest: its upper-case words are the user's own (environment names).
    if (fence !== undefined && fenceLanguage === "yaml") return;
    if (fence !== undefined) {
      const command = FENCED_COMMAND.exec(raw);
      // A wrong flag shown with the error it gets is not a claim that it exists.
      const refused = /Unknown option '(--[a-z0-9-]+)'/.exec(lines[index + 1] ?? "")?.[1];
      if (command !== null) {
        out.push(...commandMentions(command[1]!, command[2]!, at).filter((m) => m.name !== refused));
      }
      out.push(...codeMentions(raw, at));
      return;
    }
    for (const span of raw.matchAll(/`([^`]+)`/g)) {
      const content = span[1]!;
      const command = SPAN_COMMAND.exec(content);
      if (command !== null) out.push(...commandMentions(command[1]!, command[2]!, at));
      else if (isAboutPod(shown) && /^--[a-z]/.test(content)) {
        const flag = /^--[a-z][a-z0-9-]*/.exec(content)![0];
        out.push({ ...at, kind: "flag", name: flag });
      }
      out.push(...codeMentions(content, at));
    }
  });
  // A name the doc itself sets as a variable (`NAME=…`, `$NAME`) is the reader's, not a code.
  const declared = new Set(
    [...text.matchAll(/(?:\$|\b)([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)(?==)|\$([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\b/g)].map(
      (m) => (m[1] ?? m[2])!,
    ),
  );
  return out.filter((m) => m.kind !== "code" || !(declared.has(m.name) || SYSTEM_CONSTANT.test(m.name)));
}

// Kernel and libc constants (prctl, setrlimit, ptrace, clone, open flags, signals) are the system's names.
const SYSTEM_CONSTANT = /^(?:PR|RLIMIT|PTRACE|CLONE|O|SIG|CAP|MS|AT|SECCOMP)_[A-Z0-9_]+$/;

function sourceFiles(dir: string, withTests: boolean): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      if (withTests || entry.name !== "__fixtures__") out.push(...sourceFiles(path, withTests));
    } else if (/\.(?:ts|mts|cts|js|mjs)$/.test(entry.name) && (withTests || !/\.test\.[cm]?[jt]s$/.test(entry.name))) {
      out.push(path);
    }
  }
  return out;
}

/**
 * What the sources declare. `codes`: every string literal of the shape of an error code in the
 * packages' (and examples') code, tests left out (the members of the `…Code` unions, the codes
 * passed to errors and warnings). `names`: identifiers and literals of that shape anywhere in
 * the repository's code, tests and scripts included (environment variables such as
 * `env.NAME`, constants), which docs may name too.
 */
export function knownNames(): { codes: Set<string>; names: Set<string> } {
  const codes = new Set<string>();
  const names = new Set<string>();
  const scan = (file: string, into: { literals: Set<string>; identifiers: Set<string> }): void => {
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
    const visit = (node: ts.Node): void => {
      if (ts.isStringLiteralLike(node)) {
        for (const m of node.text.matchAll(CODE_SHAPE)) into.literals.add(m[0]);
        if (/^[A-Z][A-Z0-9_]*$/.test(node.text)) into.literals.add(node.text);
      } else if (ts.isIdentifier(node) && /^[A-Z][A-Z0-9_]*$/.test(node.text)) into.identifiers.add(node.text);
      ts.forEachChild(node, visit);
    };
    visit(source);
  };
  const packageDirs = ["packages", "examples"]
    .map((p) => join(repoRoot, p))
    .filter((p) => existsSync(p))
    .flatMap((root) =>
      readdirSync(root, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => join(root, e.name)),
    );
  for (const dir of packageDirs) {
    const src = join(dir, "src");
    if (!existsSync(src)) continue;
    for (const file of sourceFiles(src, false)) scan(file, { literals: codes, identifiers: names });
  }
  const everywhere = [...packageDirs, join(repoRoot, "scripts"), join(repoRoot, "test")].filter((d) => existsSync(d));
  for (const dir of everywhere) {
    for (const file of sourceFiles(dir, true)) scan(file, { literals: names, identifiers: names });
  }
  return { codes, names };
}

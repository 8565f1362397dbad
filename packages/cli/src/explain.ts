import { stat } from "node:fs/promises";
import type { RenderedPodPrompt } from "@insomnia/pod";
import { readSkillBody } from "@insomnia/skills";
import type { Style } from "./output.ts";
import { TOKENIZER } from "./token-counter.ts";
import type { TokenCounter } from "./token-counter.ts";

/** One file the instruction was built from. */
export interface ExplainedSource {
  ref: string;
  path: string;
  /** Size of the file on disk. */
  bytes: number;
  /** Hex SHA-256 of the file's text as loaded (BOM stripped, CRLF -> LF). */
  sha256: string;
}

/** One section of the final prompt. */
export interface ExplainedSection {
  name: "instruction" | "workingBoundaries" | "skills" | "agentsMd";
  bytes: number;
  tokens: number;
}

/** One skill the pod found: in the section, hidden, left out for the budget, or shadowed. */
export interface ExplainedSkill {
  name: string;
  status: "listed" | "shortened" | "hidden" | "left out" | "shadowed";
  root: string;
  path: string;
  /** Tokens of its line in the Skills section; null when it has none. */
  listingTokens: number | null;
  /** Tokens of the body `load_skill` returns; null for a shadowed skill (or one that can no longer be read). */
  bodyTokens: number | null;
  /** For a shadowed skill: the SKILL.md that won. */
  shadowedBy: string | null;
}

/** One MCP server as `pod prompt --explain` shows it. */
export interface ExplainedMcpServer {
  name: string;
  transport: "stdio" | "http";
  state: string;
  tools: string[];
  error: string | null;
}

/** Everything `pod prompt --explain` shows and `--json` prints; keys in output order. */
export interface Explanation {
  cwd: string;
  instruction: string;
  manifestFiles: string[];
  /** The workspace root, its manifest in use (null: none) and whether that manifest is trusted. */
  workspace: { root: string; manifest: string | null; trusted: boolean };
  now: string;
  tools: string[];
  /** Each MCP server, its state and the tools it offers (empty when the manifest has none). */
  mcpServers: ExplainedMcpServer[];
  tokenizer: string;
  sources: ExplainedSource[];
  agentsMd: { path: string; bytes: number; totalBytes: number; truncated: boolean } | null;
  skills: { budget: number; characters: number; entries: ExplainedSkill[] };
  sections: ExplainedSection[];
  total: { bytes: number; tokens: number };
  warnings: { code: string; message: string; file: string | null; line?: number; column?: number }[];
  prompt: string;
}

/** What went into the prompt besides the materialized result. */
export interface ExplainInput {
  cwd: string;
  instruction: string;
  manifestFiles: readonly string[];
  workspace: { root: string; manifest: string | null; trusted: boolean };
  now: Date;
  /** The MCP servers started to learn their tools. */
  mcpServers?: readonly {
    name: string;
    transport: "stdio" | "http";
    state: string;
    tools: readonly string[];
    error?: string;
  }[];
}

const SECTION_LABELS: Record<ExplainedSection["name"], string> = {
  instruction: "instruction",
  workingBoundaries: "working boundaries",
  skills: "skills",
  agentsMd: "AGENTS.md",
};

function utf8Bytes(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/** RFC 3339 in UTC with seconds, as the template's `datetime` variable. */
function rfc3339(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** Builds the explanation of a materialized prompt; object keys are created in a fixed order for stable JSON. */
export async function buildExplanation(
  input: ExplainInput,
  result: RenderedPodPrompt,
  count: TokenCounter,
): Promise<Explanation> {
  const sources = await Promise.all(
    result.sources.map(async (source) => ({
      ref: source.ref,
      path: source.file,
      bytes: (await stat(source.file)).size,
      sha256: source.sha256,
    })),
  );
  const parts: [ExplainedSection["name"], string | undefined][] = [
    ["instruction", result.sections.instruction],
    ["workingBoundaries", result.sections.workingBoundaries],
    ["skills", result.sections.skills],
    ["agentsMd", result.sections.agentsMd],
  ];
  const sections = parts.flatMap(([name, text]) =>
    text === undefined ? [] : [{ name, bytes: utf8Bytes(text), tokens: count(text) }],
  );
  const agents = result.agentsMd;
  return {
    cwd: input.cwd,
    instruction: input.instruction,
    manifestFiles: [...input.manifestFiles],
    workspace: { ...input.workspace },
    now: rfc3339(input.now),
    tools: [...result.tools],
    mcpServers: (input.mcpServers ?? []).map((server) => ({
      name: server.name,
      transport: server.transport,
      state: server.state,
      tools: [...server.tools],
      error: server.error ?? null,
    })),
    tokenizer: TOKENIZER,
    sources,
    agentsMd:
      agents === undefined
        ? null
        : { path: agents.file, bytes: agents.bytes, totalBytes: agents.totalBytes, truncated: agents.truncated },
    skills: {
      budget: result.skills.budget,
      characters: result.skills.characters,
      entries: explainSkills(result, count),
    },
    sections,
    total: { bytes: utf8Bytes(result.prompt), tokens: count(result.prompt) },
    warnings: result.warnings.map((w) => ({
      code: w.code,
      message: w.message,
      file: w.file ?? null,
      ...(w.line === undefined ? {} : { line: w.line }),
      ...(w.column === undefined ? {} : { column: w.column }),
    })),
    prompt: result.prompt,
  };
}

/** Every skill, sorted by name (listed, shortened, hidden and left out), then the shadowed ones. */
function explainSkills(result: RenderedPodPrompt, count: TokenCounter): ExplainedSkill[] {
  const listed = new Map(result.skills.listed.map((skill) => [skill.name, skill]));
  const omitted = new Set(result.skills.omitted.map((skill) => skill.name));
  const bodyTokens = (skill: RenderedPodPrompt["skills"]["catalog"][number]): number | null => {
    try {
      return count(readSkillBody(skill));
    } catch {
      return null;
    }
  };
  const found = result.skills.catalog.map((skill): ExplainedSkill => {
    const line = listed.get(skill.name);
    const status = skill.hidden
      ? "hidden"
      : omitted.has(skill.name)
        ? "left out"
        : line?.shortened
          ? "shortened"
          : "listed";
    return {
      name: skill.name,
      status,
      root: skill.root,
      path: skill.file,
      listingTokens: line === undefined ? null : count(`- ${line.name}: ${line.description} (file: ${line.file})\n`),
      bodyTokens: bodyTokens(skill),
      shadowedBy: null,
    };
  });
  const shadowed = result.skills.shadowed.map(
    (skill): ExplainedSkill => ({
      name: skill.name,
      status: "shadowed",
      root: skill.root,
      path: skill.file,
      listingTokens: null,
      bodyTokens: null,
      shadowedBy: skill.shadowedBy,
    }),
  );
  return [...found, ...shadowed];
}

function table(rows: readonly (readonly string[])[], rightAligned: ReadonlySet<number>): string[] {
  const widths = rows[0]?.map((_, col) => Math.max(...rows.map((row) => (row[col] ?? "").length))) ?? [];
  return rows.map((row) =>
    `  ${row
      .map((cell, col) => {
        const width = widths[col] ?? 0;
        if (col === row.length - 1) return cell;
        return rightAligned.has(col) ? cell.padStart(width) : cell.padEnd(width);
      })
      .join("  ")}`.trimEnd(),
  );
}

/** The human-readable map printed by `pod prompt --explain`. */
export function formatExplanation(e: Explanation, style: Style): string {
  const lines: string[] = [];
  lines.push(`System prompt of a pod in ${e.cwd}`);
  lines.push(`  instruction  ${e.instruction}`);
  lines.push(`  manifest     ${e.manifestFiles.length === 0 ? "(none, defaults)" : e.manifestFiles.join(", ")}`);
  const trusted = e.workspace.trusted ? "trusted" : "not trusted (pod trust trusts it)";
  lines.push(
    `  workspace    ${e.workspace.root}${e.workspace.manifest === null ? ", no workspace manifest" : `, ${e.workspace.manifest} ${trusted}`}`,
  );
  lines.push(`  now          ${e.now}`);
  lines.push(`  tools        ${e.tools.length === 0 ? "(none)" : e.tools.join(", ")}`);
  lines.push("");
  if (e.mcpServers.length > 0) {
    lines.push("MCP servers");
    for (const server of e.mcpServers) {
      lines.push(
        `  ${server.name} (${server.transport}): ${server.state}${server.error === null ? "" : `: ${server.error}`}`,
      );
      lines.push(`    tools: ${server.tools.length === 0 ? "(none)" : server.tools.join(", ")}`);
    }
    lines.push("");
  }
  lines.push("Source files");
  const sourceRows = [
    ["ref", "bytes", "sha256", "path"],
    ...e.sources.map((s) => [s.ref, String(s.bytes), s.sha256.slice(0, 12), s.path]),
  ];
  if (e.agentsMd !== null) {
    const note = e.agentsMd.truncated ? ` (truncated from ${e.agentsMd.totalBytes} bytes)` : "";
    sourceRows.push(["AGENTS.md", String(e.agentsMd.bytes), "-", `${e.agentsMd.path}${note}`]);
  }
  lines.push(...table(sourceRows, new Set([1])));
  lines.push("");
  lines.push("Sections");
  const sectionRows = [
    ["section", "bytes", `tokens (${e.tokenizer})`],
    ...e.sections.map((s) => [SECTION_LABELS[s.name], String(s.bytes), String(s.tokens)]),
    ["total", String(e.total.bytes), String(e.total.tokens)],
  ];
  lines.push(
    ...table(
      sectionRows.map((row) => [...row, ""]),
      new Set([1, 2]),
    ),
  );
  lines.push("  (total is the whole prompt, including the separators and headings between sections)");
  lines.push("");
  if (e.skills.entries.length === 0) {
    lines.push("Skills: none");
  } else {
    lines.push(`Skills (listing ${e.skills.characters} of ${e.skills.budget} characters)`);
    const rows = [
      ["skill", "status", "root", "listing tokens", "body tokens", "path"],
      ...e.skills.entries.map((s) => [
        s.name,
        s.status,
        s.root,
        s.listingTokens === null ? "-" : String(s.listingTokens),
        s.bodyTokens === null ? "-" : String(s.bodyTokens),
        s.shadowedBy === null ? s.path : `${s.path} (shadowed by ${s.shadowedBy})`,
      ]),
    ];
    lines.push(...table(rows, new Set([3, 4])));
  }
  lines.push("");
  if (e.warnings.length === 0) {
    lines.push("Warnings: none");
  } else {
    lines.push("Warnings");
    for (const w of e.warnings) {
      const where =
        w.file === null
          ? ""
          : `${w.file}${w.line === undefined ? "" : `:${w.line}${w.column === undefined ? "" : `:${w.column}`}`}: `;
      lines.push(`  ${style.yellow(w.code)}: ${w.line === undefined ? "" : where}${w.message}`);
    }
  }
  return `${lines.join("\n")}\n`;
}

/** The parts of a system prompt. */
export interface SystemPromptParts {
  /** The rendered instruction; trailing newlines are dropped. */
  readonly instruction: string;
  /** The scope summary; trailing newlines are dropped. */
  readonly scopeSummary: string;
  /**
   * The Skills section's text below its heading (from `formatSkillsSection`). `undefined`:
   * the section is left out, and the prompt is byte for byte what it was before skills.
   */
  readonly skills?: string | undefined;
  /** AGENTS.md text, verbatim. `undefined`: the section is left out; a string (even empty): it is there. */
  readonly agentsMd?: string | undefined;
}

const WORKING_BOUNDARIES = "---\n## Working boundaries\n\n";
const SKILLS = "\n---\n## Skills\n\n";
const PROJECT_INSTRUCTIONS = "\n---\n## Project instructions (AGENTS.md)\n\n";

function trimTrailingNewlines(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return text.slice(0, end);
}

/** Where one section lies in a system prompt: `prompt.slice(start, end)`, in UTF-16 code units. */
export interface PromptSpan {
  readonly start: number;
  readonly end: number;
}

/**
 * The sections of a system prompt as offsets into it, contiguous and in order: each trailing
 * section's span starts at its `---` line and ends with the blank line before the next one;
 * the instruction's covers the rendered body and the blank line after it. Absent sections are
 * absent keys.
 */
export interface PromptSections {
  readonly instruction: PromptSpan;
  readonly workingBoundaries: PromptSpan;
  readonly skills?: PromptSpan;
  readonly agentsMd?: PromptSpan;
}

/**
 * Builds the system prompt: the instruction, then the fixed trailing section (Working
 * boundaries, Skills when there are any, AGENTS.md when there is one). The one place that does.
 */
export function assembleSystemPrompt(parts: SystemPromptParts): string {
  return assembleSystemPromptWithSections(parts).prompt;
}

/** {@link assembleSystemPrompt}, with where each section of the result lies. */
export function assembleSystemPromptWithSections(parts: SystemPromptParts): {
  prompt: string;
  sections: PromptSections;
} {
  const body = trimTrailingNewlines(parts.instruction);
  let prompt = body === "" ? "" : `${body}\n\n`;
  const starts: [keyof PromptSections, number][] = [
    ["instruction", 0],
    ["workingBoundaries", prompt.length],
  ];
  prompt += `${WORKING_BOUNDARIES}${trimTrailingNewlines(parts.scopeSummary)}\n`;
  if (parts.skills !== undefined) {
    starts.push(["skills", prompt.length + 1]); // after the blank line that ends the section before
    prompt += `${SKILLS}${trimTrailingNewlines(parts.skills)}\n`;
  }
  if (parts.agentsMd !== undefined) {
    const agents = parts.agentsMd;
    starts.push(["agentsMd", prompt.length + 1]);
    prompt += `${PROJECT_INSTRUCTIONS}${agents}${agents === "" || agents.endsWith("\n") ? "" : "\n"}`;
  }
  // Spans are contiguous: each section ends where the next starts, the last at the end.
  const sections = Object.fromEntries(
    starts.map(([name, start], i) => [name, { start, end: starts[i + 1]?.[1] ?? prompt.length }]),
  ) as unknown as PromptSections;
  return { prompt, sections };
}

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

/**
 * Builds the system prompt: the instruction, then the fixed trailing section (Working
 * boundaries, Skills when there are any, AGENTS.md when there is one). The one place that does.
 */
export function assembleSystemPrompt(parts: SystemPromptParts): string {
  const body = trimTrailingNewlines(parts.instruction);
  let prompt = body === "" ? "" : `${body}\n\n`;
  prompt += `${WORKING_BOUNDARIES}${trimTrailingNewlines(parts.scopeSummary)}\n`;
  if (parts.skills !== undefined) prompt += `${SKILLS}${trimTrailingNewlines(parts.skills)}\n`;
  if (parts.agentsMd !== undefined) {
    const agents = parts.agentsMd;
    prompt += `${PROJECT_INSTRUCTIONS}${agents}${agents === "" || agents.endsWith("\n") ? "" : "\n"}`;
  }
  return prompt;
}

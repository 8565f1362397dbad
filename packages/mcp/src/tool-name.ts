/** The longest tool name the providers accept (Anthropic and OpenAI both stop at 64). */
export const MAX_TOOL_NAME_LENGTH = 64;

const PROVIDER_NAME = /^[A-Za-z0-9_-]+$/;

/** The name the model sees for a server's tool: `mcp__<server>__<tool>`. */
export function mcpToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The prefix every tool of `server` starts with. */
export function mcpToolPrefix(server: string): string {
  return `mcp__${server}__`;
}

/** Why a full tool name cannot be offered to a provider, or undefined when it can. */
export function toolNameProblem(name: string): string | undefined {
  if (name.length > MAX_TOOL_NAME_LENGTH) {
    return `is ${name.length} characters long, over the providers' limit of ${MAX_TOOL_NAME_LENGTH}`;
  }
  if (!PROVIDER_NAME.test(name)) return "has characters other than letters, digits, _ and - (providers refuse it)";
  return undefined;
}

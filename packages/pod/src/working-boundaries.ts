/** The line the Working boundaries section adds when the pod offers tools from MCP servers. */
export const MCP_BOUNDARIES_NOTE: string =
  "Tools named mcp__<server>__<tool> come from MCP servers and are not bound by these boundaries: " +
  "each server decides for itself what it reads, writes and reaches.";

/**
 * The Working boundaries text: the scope summary, plus {@link MCP_BOUNDARIES_NOTE} when a tool
 * comes from an MCP server (without one, the section is exactly the summary, as before).
 */
export function workingBoundaries(scopeSummary: string, tools: readonly string[]): string {
  if (!tools.some((name) => name.startsWith("mcp__"))) return scopeSummary;
  return `${scopeSummary.replace(/\n+$/, "")}\n\n${MCP_BOUNDARIES_NOTE}`;
}

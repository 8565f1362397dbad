// The reference the compaction benchmark compares with: a summary request built the way OpenCode
// builds its own (`session/compaction.ts` sends `tools: {}` and `system: []`), from ours.

/** `body` (an Anthropic Messages request) without its tools, tool choice and system prompt; its messages as they are. */
export function withoutToolsAndSystem(body) {
  const { tools: _tools, tool_choice: _choice, system: _system, ...rest } = body;
  return rest;
}

// The record mix of the segment-log benchmarks (6: the file store, 7: the PostgreSQL store),
// so both stores are measured on the same records.

/** A realistic mix: user turns, assistant turns with and without tool calls, tool results. */
export function message(i) {
  switch (i % 4) {
    case 0:
      return {
        role: "user",
        content: `Please look at src/module-${i}.ts and fix the failing test; keep the change small.`,
      };
    case 1:
      return {
        role: "assistant",
        content: "",
        toolCalls: [{ id: `call_${i}`, name: "read_file", input: { path: `src/module-${i}.ts` } }],
      };
    case 2:
      return {
        role: "tool",
        toolCallId: `call_${i - 1}`,
        name: "read_file",
        content: `export function f${i}(x: number): number {\n  return x * ${i};\n}\n`.repeat(2),
      };
    default:
      return {
        role: "assistant",
        content: `Fixed module ${i}: the multiplier was off by one. Ran the tests: all pass.`,
      };
  }
}

/** A message record of the mix. */
export const messageRecord = (i) => ({ type: "message", message: message(i) });

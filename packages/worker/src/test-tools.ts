import type { Tool } from "./tool.ts";

/** A tool that answers with its input as JSON, for tests. */
export function echoTool(name: string, description = `Echoes its input as JSON.`): Tool {
  return {
    name,
    description,
    inputSchema: { type: "object" },
    execute: (input: unknown) => JSON.stringify(input) ?? "undefined",
  };
}

/** A tool that always throws an Error with the given message, for tests. */
export function failingTool(name: string, message: string): Tool {
  return {
    name,
    description: "Always fails.",
    inputSchema: { type: "object" },
    execute: () => {
      throw new Error(message);
    },
  };
}

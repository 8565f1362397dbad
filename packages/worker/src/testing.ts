export { ScriptedLlmClient } from "./scripted-llm-client.ts";
export type { LlmScript } from "./scripted-llm-client.ts";
export { echoTool, failingTool } from "./test-tools.ts";

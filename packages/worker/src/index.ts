export type { LlmClient, LlmRequest, LlmResponse } from "./llm-client.ts";
export type { AssistantMessage, LlmUsage, Message, ToolCall, ToolMessage, UserMessage } from "./message.ts";
export type { Tool, ToolDefinition, ToolExecuteOptions, ToolFactory } from "./tool.ts";
export { ToolServer } from "./tool-server.ts";
export { DEFAULT_MAX_ITERATIONS, Worker } from "./worker.ts";
export type { TurnResult, WorkerOptions } from "./worker.ts";
export { WorkerError } from "./worker-error.ts";
export type { WorkerErrorCode, WorkerErrorOptions } from "./worker-error.ts";

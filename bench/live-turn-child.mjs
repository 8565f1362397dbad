// The reference for `pod run`'s row of live-turn.mjs: a new process that reads the same
// answer with the AI SDK's own `streamText` and writes each text chunk to stdout as it arrives.
// argv: <base URL>
import { writeSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { ROOT } from "./lib.mjs";

const fromAiSdk = createRequire(join(ROOT, "packages", "ai-sdk", "package.json"));
const { createAnthropic } = await import(pathToFileURL(fromAiSdk.resolve("@ai-sdk/anthropic")).href);
const { streamText } = await import("ai");

const model = createAnthropic({ baseURL: process.argv[2], apiKey: "k" })("claude-sonnet-4-5");
const stream = streamText({ model, system: "You are terse.", prompt: "hello", maxRetries: 0 });
for await (const text of stream.textStream) writeSync(1, text);
writeSync(1, "\n");

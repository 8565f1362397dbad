// Starts the example service: PORT, DATABASE_URL, ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL,
// MODEL, DATA_DIR) from the environment. This is the only file that reads it.
import { createAnthropic } from "@ai-sdk/anthropic";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { createPodService } from "./service.ts";

const here = join(import.meta.dirname, "..");
const databaseUrl = process.env.DATABASE_URL;
const apiKey = process.env.ANTHROPIC_API_KEY;
if (databaseUrl === undefined || apiKey === undefined) {
  console.error("pod-service: set DATABASE_URL (postgres://…) and ANTHROPIC_API_KEY");
  process.exit(2);
}
const anthropic = createAnthropic({
  apiKey,
  ...(process.env.ANTHROPIC_BASE_URL === undefined ? {} : { baseURL: process.env.ANTHROPIC_BASE_URL }),
});
const pool = new pg.Pool({ connectionString: databaseUrl });
const server = createPodService({
  pool,
  model: anthropic(process.env.MODEL ?? "claude-sonnet-4-5"),
  manifestFile: join(here, "pod.yaml"),
  promptsDir: join(here, "prompts"),
  dataDir: process.env.DATA_DIR ?? (await mkdtemp(join(tmpdir(), "pod-service-"))),
});
const port = Number(process.env.PORT ?? "8080");
server.listen(port, () => console.log(`pod-service: listening on http://127.0.0.1:${port}`));
process.on("SIGTERM", () => server.close(() => void pool.end()));

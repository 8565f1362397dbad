import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import type { PromptLoader } from "@insomnia/prompt-loader";
import type { PodWarning } from "./pod-warning.ts";

/** One recorded source of a stored prompt. */
export interface RecordedSource {
  readonly ref: string;
  readonly file: string;
  readonly sha256: string;
}

let nodeCrypto: typeof import("node:crypto") | undefined;

/**
 * Hex SHA-256 of a prompt file's text the way @insomnia/prompt-loader hashes it: BOM stripped,
 * CRLF and CR -> LF. node:crypto is loaded on first use (only restoring a pod compares hashes).
 */
export function hashPromptText(bytes: Uint8Array): string {
  const text = new TextDecoder("utf-8").decode(bytes).replace(/\r\n?/g, "\n"); // decode() drops a leading BOM
  nodeCrypto ??= createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/** Why a recorded source no longer matches, or undefined when it does. */
async function drift(source: RecordedSource, loader: PromptLoader | undefined): Promise<string | undefined> {
  try {
    if (loader !== undefined) {
      const loaded = await loader.load(source.ref);
      if (loaded.file !== source.file) return `now resolves to ${loaded.file}`;
      return loaded.sha256 === source.sha256 ? undefined : "has changed on disk";
    }
    return hashPromptText(await readFile(source.file)) === source.sha256 ? undefined : "has changed on disk";
  } catch (error) {
    return `can no longer be read (${error instanceof Error ? error.message : String(error)})`;
  }
}

/**
 * Compares recorded sources with the files now on disk (re-resolved through `loader`
 * when given) and returns a SOURCES_CHANGED warning for each that differs or is gone.
 */
export async function checkSources(sources: readonly RecordedSource[], loader?: PromptLoader): Promise<PodWarning[]> {
  const warnings: PodWarning[] = [];
  for (const source of sources) {
    const problem = await drift(source, loader);
    if (problem === undefined) continue;
    warnings.push({
      code: "SOURCES_CHANGED",
      message: `${source.ref} (${source.file}) ${problem} since this segment's system prompt was rendered; the stored prompt is kept. Start a new pod to use the new text.`,
      file: source.file,
    });
  }
  return warnings;
}

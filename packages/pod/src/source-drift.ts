import { errorText } from "@insomnia/errors";
import { readFile } from "node:fs/promises";
import { promptFileSha256 } from "@insomnia/prompt-loader";
import type { TemplateLoader } from "@insomnia/template";
import type { PodWarning } from "./pod-warning.ts";

/** One recorded source of a stored prompt. */
export interface RecordedSource {
  readonly ref: string;
  readonly file: string;
  readonly sha256: string;
}

/** Why a recorded source no longer matches, or undefined when it does. */
async function drift(source: RecordedSource, loader: TemplateLoader | undefined): Promise<string | undefined> {
  try {
    // Skill files (`skill:<name>`) are not prompt references: they are re-hashed, never re-resolved.
    if (loader !== undefined && source.ref.startsWith("$")) {
      const loaded = await loader.load(source.ref);
      if (loaded.file !== source.file) return `now resolves to ${loaded.file}`;
      return loaded.sha256 === source.sha256 ? undefined : "has changed on disk";
    }
    return promptFileSha256(await readFile(source.file)) === source.sha256 ? undefined : "has changed on disk";
  } catch (error) {
    return `can no longer be read (${errorText(error)})`;
  }
}

/**
 * Compares recorded sources with the files now on disk (re-resolved through `loader`
 * when given) and returns a SOURCES_CHANGED warning for each that differs or is gone.
 */
export async function checkSources(sources: readonly RecordedSource[], loader?: TemplateLoader): Promise<PodWarning[]> {
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

import { DEFAULT_COMPACT_INSTRUCTION } from "@insomnia/manifest";
import type { ManifestOrigins, PodManifest } from "@insomnia/manifest";
import { contextWindowOf } from "@insomnia/pod";
import { PromptLoader } from "@insomnia/prompt-loader";
import type { Problem } from "./problem.ts";

/**
 * What `pod check` says about compaction: a model whose context window is neither in the shipped
 * table nor set (`provider.context_window`) is never compacted on its own (a warning at
 * `provider.model`); a `worker.compact_instruction` that cannot be read is an error at its key.
 */
export async function compactionProblems(
  manifest: PodManifest,
  origins: ManifestOrigins,
  env: NodeJS.ProcessEnv,
): Promise<Problem[]> {
  const problems: Problem[] = [];
  const provider = manifest.provider;
  if (provider !== undefined && contextWindowOf(provider) === undefined) {
    const at = origins["provider.model"];
    problems.push({
      ...(at === undefined ? {} : { file: at.file, line: at.line, column: at.column }),
      code: "CONTEXT_WINDOW_UNKNOWN",
      message: `the context window of ${provider.model} is not in the shipped table, so the pod never compacts this conversation on its own and a long one ends in CONTEXT_OVERFLOW; set provider.context_window to the model's window in tokens (pod compact still works)`,
      severity: "warning",
    });
  }
  const ref = manifest.worker.compact_instruction ?? DEFAULT_COMPACT_INSTRUCTION;
  try {
    await PromptLoader.forPod({ cwd: manifest.pod.pwd, env }).load(ref);
  } catch (error) {
    const at = origins["worker.compact_instruction"];
    const detail = (error as { detail?: string }).detail ?? String(error);
    problems.push({
      ...(at === undefined ? {} : { file: at.file, line: at.line, column: at.column }),
      code: "INVALID_COMPACT_INSTRUCTION",
      ...(typeof (error as { code?: unknown }).code === "string" ? { cause: (error as { code: string }).code } : {}),
      message: `worker.compact_instruction ${ref} cannot be read: ${detail}; fix the reference or the file`,
      severity: "error",
    });
  }
  return problems;
}

import type { PodManifest } from "@insomnia/manifest";
import type { PodToolFactory } from "@insomnia/pod";

/**
 * The tool factories of every `pod` command's pod, so `pod prompt` renders the tool list
 * `pod run` registers: the file tools the manifest's `worker.tools` names, on the pod's scope.
 */
export function podToolFactories(manifest: PodManifest): PodToolFactory[] {
  const names = manifest.worker.tools;
  if (names.length === 0) return [];
  return [async ({ scope }) => (await import("@insomnia/fs-tools")).fsTools(scope, { tools: names })];
}

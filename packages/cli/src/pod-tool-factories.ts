import type { PodManifest } from "@insomnia/manifest";
import type { PodToolFactory } from "@insomnia/pod";

/** What {@link podToolFactories} needs besides the manifest. */
export interface PodToolFactoriesOptions {
  /** Where run_command's sandbox finds `bwrap` and takes `PATH` and `LANG` from (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** Told why run_command is not offered (`SANDBOX_UNAVAILABLE`). */
  warn?: ((warning: { code: string; message: string }) => void) | undefined;
  /**
   * `probe` (`pod run`): run_command only where bubblewrap works here. `assume` (`pod prompt`):
   * the tools a pod offers where the sandbox works, without starting bubblewrap to find out.
   */
  sandbox?: "probe" | "assume";
}

/**
 * The tool factories of a pod: the file tools of `worker.tools` (all four unless the manifest
 * says otherwise) and `run_command` when `worker.tools` names it and the sandbox works (else a
 * `SANDBOX_UNAVAILABLE` warning: a command never runs unsandboxed). The pod calls them with the
 * scope it built from the manifest, so the prompt's Working boundaries and the tools agree.
 */
export function podToolFactories(manifest: PodManifest, options: PodToolFactoriesOptions = {}): PodToolFactory[] {
  const names = manifest.worker.tools;
  if (names.length === 0) return [];
  const factories: PodToolFactory[] = [
    async ({ scope }) => {
      const { fsTools, isFsToolName } = await import("@insomnia/fs-tools");
      return fsTools(scope, { tools: names.filter(isFsToolName) });
    },
  ];
  if (names.includes("run_command")) {
    factories.push(async ({ scope }) => {
      const { detectSandbox, runCommandTool, Sandbox } = await import("@insomnia/sandbox");
      let bwrapPath = "bwrap";
      if (options.sandbox !== "assume") {
        const found = await detectSandbox({ env: options.env });
        if (!found.available) {
          options.warn?.({ code: found.error.code, message: found.error.detail });
          return [];
        }
        bwrapPath = found.bwrapPath;
      }
      const settings = manifest.worker.run_command;
      // Commands start in the scope's base: pod.pwd with symlinks resolved, a path that exists inside the sandbox.
      const sandbox = new Sandbox(scope, { bwrapPath, network: settings?.network, env: options.env });
      return [runCommandTool(sandbox, { maxTimeoutMs: settings?.timeout_ms })];
    });
  }
  return factories;
}

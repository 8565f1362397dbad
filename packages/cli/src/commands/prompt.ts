import { didYouMeanSuffix } from "@insomnia/errors";
import { checkWorkspaceTrust, loadManifest, WORKER_TOOL_NAMES } from "@insomnia/manifest";
import { previewSystemPrompt } from "@insomnia/pod";
import type { PromptOptions } from "../args.ts";
import { CliError } from "../cli-error.ts";
import type { CliIo } from "../io.ts";
import { manifestLoadOptions } from "../manifest-input.ts";
import { formatProblemLine, styleFor } from "../output.ts";
import { probeMcpServers } from "../mcp-tools.ts";
import { podToolFactories } from "../pod-tool-factories.ts";
import { forTerminal } from "../shown-text.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";

/** `pod prompt`: prints the system prompt a pod started in the directory would send, byte for byte. */
export async function runPrompt(options: PromptOptions, io: CliIo): Promise<number> {
  const cwd = await resolveWorkspaceDir(options.cwd, io.cwd);
  const { manifest, files, workspace } = await loadManifest(manifestLoadOptions(options, cwd, io));
  // Before any MCP server starts or any prompt file is read: a checkout may narrow, never widen.
  checkWorkspaceTrust(manifest, { env: { ...io.env } });
  const now = options.now ?? new Date();
  // --tool names what worker.tools may name (or an MCP server's tool, mcp__<server>__<tool>):
  // a pod could never have another tool.
  for (const tool of options.tools ?? []) {
    if (!WORKER_TOOL_NAMES.includes(tool) && !/^mcp__[^_].*__./.test(tool)) {
      throw new CliError(
        "USAGE",
        `--tool '${tool}' is not a tool a pod can have${didYouMeanSuffix(tool, WORKER_TOOL_NAMES)}; the tools are ${WORKER_TOOL_NAMES.join(", ")}, as for worker.tools, and MCP servers' mcp__<server>__<tool> (see 'pod prompt --help')`,
      );
    }
  }
  // A pod registers the manifest's worker.tools and its MCP servers' tools, so that is what its
  // template sees unless --tool says otherwise (then no server is started).
  const mcp = options.tools === undefined ? await probeMcpServers(manifest, io.env) : undefined;
  // Without --tool, the pod's own tool factories name the tools, as `pod run` makes them.
  const tools = options.tools ?? mcp?.tools ?? [];
  const toolFactories = options.tools === undefined ? podToolFactories(manifest, { sandbox: "assume" }) : [];
  const style = styleFor(io.stderr, io.env);
  for (const warning of mcp?.warnings ?? []) {
    const problem = { code: warning.code, message: warning.message, severity: "warning" as const };
    io.stderr.write(`pod: ${formatProblemLine(problem, style)}\n`);
  }
  // A failure goes to main's report; one about a manifest value is shown at the line that set it.
  const result = await previewSystemPrompt({ manifest, tools, toolFactories, now, env: { ...io.env } });

  // Warnings always go to stderr; --explain and --json also list them in their output.
  for (const warning of result.warnings) {
    const problem = {
      code: warning.code,
      message: warning.message,
      severity: "warning" as const,
      file: warning.file,
      line: warning.line,
      column: warning.column,
    };
    io.stderr.write(`pod: ${formatProblemLine(problem, style)}\n`);
  }
  if (!options.explain && !options.json) {
    // Byte for byte on a pipe; on a terminal, a checkout's escape sequences are shown, not run.
    io.stdout.write(forTerminal(io.stdout, result.prompt));
    return 0;
  }

  const [{ buildExplanation, formatExplanation }, { loadTokenCounter }] = await Promise.all([
    import("../explain.ts"),
    import("../token-counter.ts"),
  ]);
  const explanation = await buildExplanation(
    {
      cwd: manifest.pod.pwd,
      instruction: manifest.worker.instruction,
      manifestFiles: files,
      workspace: { root: workspace.root, manifest: workspace.layer ?? null, trusted: workspace.trusted },
      now,
      mcpServers: mcp?.servers ?? [],
    },
    result,
    await loadTokenCounter(),
  );
  io.stdout.write(
    options.json
      ? `${JSON.stringify(explanation, null, 2)}\n`
      : formatExplanation(explanation, styleFor(io.stdout, io.env)),
  );
  return 0;
}

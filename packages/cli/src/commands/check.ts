import { lstatSync } from "node:fs";
import { relative, resolve } from "node:path";
import {
  findWidenings,
  findWorkspace,
  loadManifest,
  ManifestError,
  untrustedWorkspaceError,
  projectManifestPath,
  readManifestFile,
  userManifestPath,
  validateManifestLayer,
  validateOverlay,
} from "@insomnia/manifest";
import type { LoadedWorkspace, ManifestOrigins, ManifestWidening, PodManifest } from "@insomnia/manifest";
import { PodError, parsePodInstruction, parsePodPrompt, readAgentsMd, readSkillCatalog } from "@insomnia/pod";
import type { CheckOptions } from "../args.ts";
import { classifyError, problemFromUserError, problemsOf } from "../errors.ts";
import type { CliIo } from "../io.ts";
import { manifestLoadOptions } from "../manifest-input.ts";
import { unknownProviderKind } from "../provider-kind.ts";
import { formatProblemLine, styleFor } from "../output.ts";
import { redacted } from "../shown-text.ts";
import { trustLines, type WorkspaceTrust } from "../trust-lines.ts";
import type { Problem } from "../problem.ts";
import { probeMcpServers } from "../mcp-tools.ts";
import type { ProbedMcpServers } from "../mcp-tools.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";
import { compactionProblems } from "../compaction-check.ts";

/** `pod check`: loads the manifest and parses the instruction with every include; reports every problem. */
export async function runCheck(options: CheckOptions, io: CliIo): Promise<number> {
  const cwd = await resolveWorkspaceDir(options.cwd, io.cwd);
  const problems: Problem[] = [];
  let summary: string | undefined;
  let trust: WorkspaceTrust | undefined;
  let mcp: ProbedMcpServers | undefined;

  const loaded = await checkManifest(options, cwd, io, problems);
  if (loaded !== undefined) {
    const { manifest, origins } = loaded;
    const widenings = findWidenings(manifest, { env: { ...io.env } });
    trust = workspaceTrust(loaded.workspace, widenings);
    const refused = widenings.filter((widening) => widening.origin.trusted === false);
    // An untrusted layer that widens is refused before anything is read or started: report each value, check nothing more.
    for (const widening of refused) problems.push(problemFromUserError(untrustedWorkspaceError(widening)));
    if (refused.length === 0) {
      // pod run would refuse these; check says so first.
      const unknownKind = unknownProviderKind(manifest, origins);
      if (unknownKind !== undefined) problems.push(classifyCliError(unknownKind));
      problems.push(...missingScopeTargets(manifest, origins));
      await checkSandbox(manifest, origins, io, problems);
      // With a provider pod run would refuse, its window does not matter yet.
      if (unknownKind === undefined) problems.push(...(await compactionProblems(manifest, origins, { ...io.env })));
      const checked = await checkInstruction(manifest, io, problems);
      if (checked !== undefined) {
        const { sources, skills } = checked;
        summary = `ok: ${manifest.worker.instruction}, ${sources} source file${sources === 1 ? "" : "s"}`;
        if (skills > 0) summary += `, ${skills} skill${skills === 1 ? "" : "s"}`;
      }
      // A pod starts its MCP servers to learn their tools: check does the same, bounded by their timeouts.
      mcp = await probeMcpServers(manifest, io.env);
      for (const warning of mcp.warnings)
        problems.push({ code: warning.code, message: warning.message, severity: "warning" });
    }
  }
  const serverLines = (mcp?.servers ?? []).map(
    (server) =>
      `mcp server ${server.name} (${server.transport}): ${server.state}` +
      (server.error === undefined ? "" : ` (${server.error})`) +
      `, ${server.tools.length} tool${server.tools.length === 1 ? "" : "s"}` +
      (server.tools.length === 0 ? "" : `: ${server.tools.join(", ")}`),
  );

  const ok = !problems.some((p) => p.severity === "error");
  if (options.json) {
    const out = {
      ok,
      problems: problems.map((p) => ({
        file: p.file ?? null,
        line: p.line ?? null,
        column: p.column ?? null,
        code: p.code,
        cause: p.cause ?? null,
        message: p.message,
        severity: p.severity,
      })),
      workspace: trust ?? null,
      // Present when the manifest declares MCP servers, so a check without any prints what it did before.
      ...(mcp === undefined || mcp.servers.length === 0
        ? {}
        : {
            mcpServers: mcp.servers.map((server) => ({
              name: server.name,
              transport: server.transport,
              state: server.state,
              tools: server.tools,
              error: server.error ?? null,
            })),
          }),
    };
    io.stdout.write(`${redacted(JSON.stringify(out, null, 2))}\n`);
  } else {
    const style = styleFor(io.stderr, io.env);
    for (const problem of problems) io.stderr.write(`${formatProblemLine(problem, style)}\n`);
    if (ok && summary !== undefined) io.stdout.write(`${summary}\n`);
    for (const line of serverLines) io.stdout.write(`${line}\n`);
    // Failures (an untrusted widening value among them) are on stderr; a clean check says where it ran.
    if (ok && trust !== undefined && trust.manifest !== null) io.stdout.write(trustLines(trust));
  }
  return ok ? 0 : 1;
}

function classifyCliError(error: unknown): Problem {
  const classified = classifyError(error);
  if (classified.kind === "internal") throw error;
  return classified.problem;
}

/** Nothing at `path` (a broken link or loop is something: the scope reports it). */
function isMissing(path: string): boolean {
  try {
    lstatSync(path);
    return false;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR";
  }
}

/**
 * A scope rule whose target does not exist grants (or denies) nothing until it does: a typo
 * here would otherwise pass silently. A warning, since a pod may create the directory later.
 */
function missingScopeTargets(manifest: PodManifest, origins: ManifestOrigins): Problem[] {
  const problems: Problem[] = [];
  for (const list of ["allow", "deny"] as const) {
    manifest.scope[list].forEach((rule, index) => {
      const location = `scope.${list}[${index}]`;
      const origin = origins[`${location}.target`];
      const path = resolve(manifest.pod.pwd, rule.target);
      if (origin === undefined || !isMissing(path)) return;
      problems.push({
        file: origin.file,
        line: origin.line,
        column: origin.column,
        code: "SCOPE_TARGET_MISSING",
        message: `${location}: target "${rule.target}" does not exist${rule.target === path ? "" : ` (${path})`}; the rule ${list === "allow" ? "grants" : "denies"} nothing until it does: fix the path or create it`,
        severity: "warning",
      });
    });
  }
  return problems;
}

function workspaceTrust(workspace: LoadedWorkspace, widenings: readonly ManifestWidening[]): WorkspaceTrust {
  return {
    root: workspace.root,
    manifest: workspace.layer ?? null,
    trusted: workspace.trusted,
    grants: widenings.map(({ key, grants, origin }) => ({
      key,
      grants,
      file: origin.file,
      line: origin.line,
      column: origin.column,
    })),
  };
}

/**
 * When `worker.tools` names run_command: whether its sandbox works here; if not, a warning
 * at `worker.tools` saying why and what to do (the pod runs without the tool, never unsandboxed);
 * likewise when it works but cannot bound the number of a command's processes.
 */
async function checkSandbox(manifest: PodManifest, origins: ManifestOrigins, io: CliIo, problems: Problem[]) {
  if (!manifest.worker.tools.includes("run_command")) return;
  const { detectSandbox } = await import("@insomnia/sandbox");
  const found = await detectSandbox({ env: io.env });
  // Sandboxed but without a bound on a command's processes is a warning too, never a silent gap.
  const error = found.available ? found.warning : found.error;
  if (error === undefined) return;
  const at = origins["worker.tools"];
  problems.push({
    ...(at === undefined ? {} : { file: at.file, line: at.line, column: at.column }),
    code: error.code,
    message: error.detail,
    severity: "warning",
  });
}

/** Loads the manifest; on failure validates each layer on its own to report every issue, not just the first. */
async function checkManifest(
  options: CheckOptions,
  cwd: string,
  io: CliIo,
  problems: Problem[],
): Promise<{ manifest: PodManifest; origins: ManifestOrigins; workspace: LoadedWorkspace } | undefined> {
  const loadOptions = manifestLoadOptions(options, cwd, io);
  try {
    return await loadManifest(loadOptions);
  } catch (error) {
    if (!ManifestError.is(error)) throw error;
    const found = await collectLayerIssues(loadOptions.env ?? {}, cwd, loadOptions.manifestFile, options.overlays);
    const first = problemFromUserError(error);
    const same = (p: Problem) =>
      p.file === first.file && p.line === first.line && p.column === first.column && p.code === first.code;
    problems.push(...(found.some(same) ? found : [first, ...found]));
    return undefined;
  }
}

/** The layer's text, or undefined when it is absent or unreadable (loadManifest already reported why). */
async function readIfPresent(path: string | undefined): Promise<string | undefined> {
  if (path === undefined) return undefined;
  // readManifestFile refuses FIFOs and devices without blocking, where a plain readFile would hang.
  return readManifestFile(path, { optional: true }).catch(() => undefined);
}

/** Every issue of every layer, in layer order; names files as loadManifest does. */
async function collectLayerIssues(
  env: NodeJS.ProcessEnv,
  cwd: string,
  manifestFile: string | undefined,
  overlays: readonly string[],
): Promise<Problem[]> {
  const layers: { text: string | undefined; display: string }[] = [];
  const userPath = userManifestPath(env);
  layers.push({ text: await readIfPresent(userPath), display: userPath ?? "" });
  // The workspace layer where loadManifest found it (in cwd or above), named as it names it.
  const projectPath =
    manifestFile === undefined ? projectManifestPath(findWorkspace(cwd, env).root) : resolve(cwd, manifestFile);
  layers.push({ text: await readIfPresent(projectPath), display: manifestFile ?? relative(cwd, projectPath) });

  const problems: Problem[] = [];
  for (const layer of layers) {
    if (layer.text === undefined) continue;
    const result = validateManifestLayer(layer.text, layer.display);
    if (!result.ok) problems.push(...result.issues.map((issue) => problemFromUserError(issue)));
  }
  overlays.forEach((expression, index) => {
    const result = validateOverlay(expression, overlays.length === 1 ? "--overlay" : `<overlay ${index + 1}>`);
    if (!result.ok) problems.push(...result.issues.map((issue) => problemFromUserError(issue)));
  });
  return problems;
}

/**
 * Parses the instruction the way a pod does (scope first, then the template) and reads the
 * skills catalog (each broken skill is a positioned warning); returns the counts.
 */
async function checkInstruction(
  manifest: PodManifest,
  io: CliIo,
  problems: Problem[],
): Promise<{ sources: number; skills: number } | undefined> {
  const env = { ...io.env };
  try {
    const prepared = await parsePodPrompt(manifest, { env });
    const agents = await readAgentsMd(prepared.cwd, prepared.scope, { root: prepared.root });
    for (const warning of agents.warnings) {
      problems.push({
        ...(warning.file === undefined ? {} : { file: warning.file }),
        code: warning.code,
        message: warning.message,
        severity: "warning",
      });
    }
    const catalog = readSkillCatalog(prepared);
    for (const warning of catalog.warnings) {
      problems.push({
        ...(warning.file === undefined ? {} : { file: warning.file }),
        ...(warning.line === undefined ? {} : { line: warning.line }),
        ...(warning.column === undefined ? {} : { column: warning.column }),
        code: warning.code,
        message: warning.message,
        severity: "warning",
      });
    }
    return { sources: prepared.template.sources.length, skills: catalog.skills.length };
  } catch (error) {
    const classified = classifyError(error);
    if (classified.kind === "internal") throw error;
    problems.push(...problemsOf(error, classified.problem));
    // The scope is built before the template is parsed; parse it anyway so both problems show.
    if (PodError.is(error) && error.code === "INVALID_SCOPE") {
      try {
        await parsePodInstruction(manifest, { env });
      } catch (parseError) {
        const parsed = classifyError(parseError);
        if (parsed.kind === "internal") throw parseError;
        problems.push(...problemsOf(parseError, parsed.problem));
      }
    }
    return undefined;
  }
}

import { realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { setProblems } from "@insomnia/errors";
import { isSameOrInside } from "@insomnia/safe-read";
import { DEFAULT_RUN_COMMAND_TIMEOUT_MS } from "./defaults.ts";
import { ManifestError } from "./manifest-error.ts";
import type { ManifestOrigin } from "./manifest-origins.ts";
import { userHome } from "./manifest-paths.ts";
import { manifestProvenance } from "./manifest-provenance.ts";
import { realDirectory } from "./trust-store.ts";
import type { PodManifest } from "./types.ts";

/** A value that lets the pod do more than the workspace allows by itself, and where it was written. */
export interface ManifestWidening {
  /** Dotted key, e.g. `scope.allow[0].target`. */
  readonly key: string;
  /** What the value grants, as a phrase: `write access to /etc, outside the workspace /src/app`. */
  readonly grants: string;
  readonly origin: ManifestOrigin;
}

/** What a widening rule sees besides the value. */
export interface WideningContext {
  readonly manifest: PodManifest;
  /** Real path of the workspace root. */
  readonly root: string;
  /** The dotted key being checked. */
  readonly key: string;
  readonly origin: ManifestOrigin;
  readonly env: NodeJS.ProcessEnv;
}

/** One key an untrusted workspace layer may not set in a widening way: a pattern over origin keys and a test. */
export interface WideningRule {
  readonly key: RegExp;
  /** What the value grants, or undefined when it does not widen (a loopback URL, a target inside the workspace). */
  readonly grants: (value: unknown, context: WideningContext) => string | undefined;
}

/**
 * The keys an untrusted workspace layer may only narrow. A key added to the manifest that
 * widens what the pod can do gets one line here, e.g.
 * `{ key: /^mcp_servers\.[^.]+$/, grants: (v) => "starts an MCP server" }` or
 * `{ key: /^worker\.run_command\.network$/, grants: (v) => (v === true ? "lets commands reach the network" : undefined) }`.
 */
export const WIDENING_RULES: readonly WideningRule[] = Object.freeze([
  { key: /^pod\.pwd$/, grants: pwdOutsideRoot },
  { key: /^scope\.allow\[\d+\]\.target$/, grants: allowOutsideRoot },
  { key: /^provider\.base_url$/, grants: nonLoopbackBaseUrl },
  { key: /^provider\.api_key_file$/, grants: keyFileOutsideRoot },
  {
    key: /^mcp_servers\.[^.]+$/,
    grants: (_value, { key }) =>
      `starts or connects to the MCP server ${key.slice(12)}, whose tools the model may call`,
  },
  {
    // Tool subsets narrow; run_command is off by default, so naming it turns commands on.
    key: /^worker\.tools$/,
    grants: (value) =>
      Array.isArray(value) && value.includes("run_command")
        ? "lets the model run commands (run_command, in the sandbox)"
        : undefined,
  },
  {
    key: /^worker\.run_command\.network$/,
    grants: (value) => (value === true ? "lets run_command's commands reach the network" : undefined),
  },
  {
    key: /^worker\.run_command\.timeout_ms$/,
    grants: (value) =>
      typeof value === "number" && value > DEFAULT_RUN_COMMAND_TIMEOUT_MS
        ? `lets a command run for ${value} ms, longer than the default ${DEFAULT_RUN_COMMAND_TIMEOUT_MS}`
        : undefined,
  },
]);

/** Real path of `path`, resolving the part that exists (a target may not exist yet). */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    const parent = dirname(path);
    return parent === path ? path : join(realPathOf(parent), basename(path));
  }
}

function pwdOutsideRoot(value: unknown, { root }: WideningContext): string | undefined {
  const real = realPathOf(String(value));
  return isSameOrInside(root, real) ? undefined : `runs the pod in ${real}, outside the workspace ${root}`;
}

function allowOutsideRoot(value: unknown, { manifest, root, key }: WideningContext): string | undefined {
  const real = realPathOf(resolve(manifest.pod.pwd, String(value)));
  if (isSameOrInside(root, real)) return undefined;
  const permission = valueAt(manifest, key.replace(/\.target$/, ".permission")) === "read" ? "read" : "write";
  return `grants ${permission} access to ${real}, outside the workspace ${root}`;
}

/**
 * A host on this machine: requests sent there do not leave it. Only names that need no DNS:
 * `localhost`, 127.0.0.0/8 and ::1 (also as an IPv4-mapped address).
 */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" ||
    host === "localhost." ||
    host === "::1" ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)
  );
}

function nonLoopbackBaseUrl(value: unknown): string | undefined {
  let url: URL | undefined;
  try {
    url = new URL(String(value));
  } catch {
    url = undefined;
  }
  if (url !== undefined && isLoopbackHost(url.hostname)) return undefined;
  const where = url === undefined ? String(value) : url.host;
  return `sends the model requests (with your API key, if one is used) and everything in them to ${where}, which is not this machine`;
}

function keyFileOutsideRoot(_value: unknown, { manifest, root, env }: WideningContext): string | undefined {
  const path = apiKeyFilePath(manifest, env);
  if (path === undefined) return undefined;
  const real = realPathOf(path);
  return isSameOrInside(root, real) ? undefined : `reads the API key from ${real}, outside the workspace ${root}`;
}

/** The value at a dotted key (`scope.allow[0].target`) of a manifest. */
function valueAt(manifest: PodManifest, key: string): unknown {
  let current: unknown = manifest;
  for (const segment of key.split(/\.|\[(\d+)\]/).filter((part) => part !== undefined && part !== "")) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string, unknown>)[segment];
  }
  return current;
}

/**
 * The absolute path of `provider.api_key_file`: `~/` is the home directory, an absolute path
 * is itself, a relative one is relative to the directory of the layer file that set it.
 */
export function apiKeyFilePath(manifest: PodManifest, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const written = manifest.provider?.api_key_file;
  if (written === undefined) return undefined;
  if (written === "~" || written.startsWith("~/")) return join(userHome(env) ?? "/", written.slice(1));
  if (isAbsolute(written)) return written;
  const layer = manifestProvenance(manifest)?.origins["provider.api_key_file"]?.path;
  return resolve(layer === undefined ? manifest.pod.pwd : dirname(layer), written);
}

/**
 * The directory every "inside the workspace" check compares with (key file, AGENTS.md,
 * `$workspace` prompts, skills): the workspace root where the pod runs, or `pod.pwd` when the
 * user's own layer set it (or the manifest was built by hand) — never a value the checkout set.
 */
export function workspaceRootOf(manifest: PodManifest): string {
  const provenance = manifestProvenance(manifest);
  if (provenance === undefined) return manifest.pod.pwd;
  const pwd = provenance.origins["pod.pwd"];
  return pwd !== undefined && pwd.layer !== "workspace" && pwd.trusted !== false ? manifest.pod.pwd : provenance.root;
}

/** Options of {@link findWidenings} and {@link checkWorkspaceTrust}. */
export interface WorkspaceTrustOptions {
  /** HOME for `~/` in `provider.api_key_file` (default process.env). */
  env?: NodeJS.ProcessEnv | undefined;
}

/**
 * Every value from the workspace layer that widens what the pod can do (what trusting the
 * workspace grants), trusted or not, in manifest order. Empty for a manifest built by hand.
 */
export function findWidenings(manifest: PodManifest, options: WorkspaceTrustOptions = {}): ManifestWidening[] {
  const provenance = manifestProvenance(manifest);
  if (provenance === undefined) return [];
  const root = realDirectory(provenance.root);
  const env = options.env ?? process.env;
  const found: ManifestWidening[] = [];
  for (const [key, origin] of Object.entries(provenance.origins)) {
    if (origin.layer !== "workspace") continue;
    const rule = WIDENING_RULES.find((candidate) => candidate.key.test(key));
    const grants = rule?.grants(valueAt(manifest, key), { manifest, root, key, origin, env });
    if (grants !== undefined) found.push({ key, grants, origin });
  }
  return found.sort((a, b) => a.origin.line - b.origin.line || a.origin.column - b.origin.column);
}

/** The widening values of layers the user has not trusted; empty when `trusted` is passed. */
export function untrustedWidenings(
  manifest: PodManifest,
  options: WorkspaceTrustOptions & { trusted?: boolean | undefined } = {},
): ManifestWidening[] {
  if (options.trusted === true) return [];
  return findWidenings(manifest, options).filter((widening) => widening.origin.trusted === false);
}

/** The UNTRUSTED_WORKSPACE error for one widening value, at its position. */
export function untrustedWorkspaceError(widening: ManifestWidening): ManifestError {
  const { key, grants, origin } = widening;
  return new ManifestError(
    "UNTRUSTED_WORKSPACE",
    `${key} ${grants}; this workspace's manifest is not trusted, so it may only narrow what the pod can do, and nothing was read, run or sent. ` +
      `Review ${origin.file} and run 'pod trust' to trust this workspace, or set the value in your user manifest or with --overlay`,
    { key, file: origin.file, line: origin.line, column: origin.column },
  );
}

/**
 * Refuses a manifest whose untrusted workspace layer widens what the pod can do: throws
 * UNTRUSTED_WORKSPACE at the first such value (every one is in `problems`), unless the
 * caller passes `trusted: true`. Call it before anything is read, run or sent.
 */
export function checkWorkspaceTrust(
  manifest: PodManifest,
  options: WorkspaceTrustOptions & { trusted?: boolean | undefined } = {},
): void {
  const widenings = untrustedWidenings(manifest, options);
  if (widenings.length === 0) return;
  const errors = widenings.map(untrustedWorkspaceError);
  throw setProblems(errors[0]!, errors);
}

import { closeSync, constants, fstatSync, openSync, realpathSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { isSameOrInside, openedPath, readCapped } from "@insomnia/errors";
import { type ManifestOrigins, PROJECT_MANIFEST_PATH, type PodManifest } from "@insomnia/manifest";
import type { aiSdkClient } from "@insomnia/ai-sdk";
import { CliError } from "./cli-error.ts";
import type { CliIo } from "./io.ts";
import { type ProxyEnv, providerFetch } from "./provider-fetch.ts";

/** An AI SDK language model, as aiSdkClient takes it. */
export type LanguageModel = Parameters<typeof aiSdkClient>[0];

import { PROVIDER_KINDS, type ProviderKind, unknownProviderKind } from "./provider-kind.ts";

export { PROVIDER_KINDS };

const KEY_VARIABLE: Record<ProviderKind, string | undefined> = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  // Never send an OpenAI key to another server: a compatible server's key comes from its file.
  "openai-compatible": undefined,
};

function at(origins: ManifestOrigins, key: string): { file?: string; line?: number; column?: number } {
  const origin = origins[key];
  return origin === undefined ? {} : { file: origin.file, line: origin.line, column: origin.column };
}

/** The checked provider block of a manifest. */
export interface ProviderChoice {
  kind: ProviderKind;
  model: string;
  baseURL?: string;
  apiKeyFile?: string;
  /** Set when the workspace's own manifest named `apiKeyFile`: the file must really be inside this directory. */
  keyFileWithin?: string;
}

/** Where each provider sends its requests without a base URL: a key may always go there. */
const DEFAULT_ORIGIN: Record<ProviderKind, string | undefined> = {
  anthropic: "https://api.anthropic.com",
  openai: "https://api.openai.com",
  "openai-compatible": undefined,
};

/**
 * A host on this machine: a key sent there does not leave it. Only names that need no DNS:
 * `localhost` (the hosts file's), 127.0.0.0/8 and ::1 (also as an IPv4-mapped address); a
 * name like `x.localhost` would be resolved by whatever DNS answers.
 */
function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/^\[|\]$/g, "");
  return (
    host === "localhost" ||
    host === "localhost." ||
    host === "::1" ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    /^::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}$/.test(host)
  );
}

/** Whether the checkout's own `.insomnia/pod.yaml` set `key` (not the user's layers, `--manifest` or `--overlay`). */
function setByWorkspace(origins: ManifestOrigins, key: string): boolean {
  return origins[key]?.file === PROJECT_MANIFEST_PATH;
}

/**
 * A checkout's `.insomnia/pod.yaml` is not trusted (docs/security.md): it must not decide to
 * send the user's API key to another server. A `provider.base_url` set there is refused
 * when a key would go with the requests, unless it is on this machine (a local model
 * server or a test) or the provider's own API. The user layer, `--manifest FILE` and
 * `--overlay` are the user's own: their origins are named by absolute path or as overlays,
 * never as the workspace layer.
 */
function checkKeyDestination(choice: ProviderChoice, origins: ManifestOrigins): void {
  if (choice.baseURL === undefined || !setByWorkspace(origins, "provider.base_url")) return;
  const keyFrom = choice.apiKeyFile !== undefined ? `the key in ${choice.apiKeyFile}` : KEY_VARIABLE[choice.kind];
  if (keyFrom === undefined) return;
  let url: URL | undefined;
  try {
    url = new URL(choice.baseURL);
  } catch {
    url = undefined;
  }
  if (url !== undefined && (isLoopback(url.hostname) || url.origin === DEFAULT_ORIGIN[choice.kind])) return;
  throw new CliError(
    "UNTRUSTED_BASE_URL",
    `this workspace's manifest sends the model requests, with ${keyFrom}, to ${choice.baseURL}; a checkout does not choose where your key goes, so nothing was sent. If you trust that server, set provider.base_url in your user manifest (~/.config/insomnia/pod.yaml), or pass --overlay 'provider.base_url = ${choice.baseURL}' or --manifest ${PROJECT_MANIFEST_PATH}`,
    at(origins, "provider.base_url"),
  );
}

/**
 * Checks the manifest's provider block; no block or an unknown kind is a coded error (exit 1),
 * and so is a base URL from the checkout's own manifest that would take the key elsewhere.
 */
export function providerChoice(
  manifest: PodManifest,
  origins: ManifestOrigins,
  files: readonly string[],
  io: CliIo,
): ProviderChoice {
  const provider = manifest.provider;
  if (provider === undefined) {
    throw new CliError(
      "NO_PROVIDER",
      "no provider block in the manifest: add one to .insomnia/pod.yaml, e.g.\n  provider:\n    kind: anthropic\n    model: claude-sonnet-4-5\n(see docs/models.md)",
    );
  }
  const unknown = unknownProviderKind(manifest, origins);
  if (unknown !== undefined) throw unknown;
  const kind = provider.kind as ProviderKind;
  if (kind === "openai-compatible" && provider.base_url === undefined) {
    throw new CliError(
      "NO_PROVIDER",
      "provider.base_url is required for openai-compatible: the server's URL that ends in /v1, e.g. http://localhost:11434/v1 for Ollama",
      at(origins, "provider.kind"),
    );
  }
  let apiKeyFile: string | undefined;
  if (provider.api_key_file !== undefined) {
    const written = provider.api_key_file;
    const origin = origins["provider.api_key_file"];
    // Origins name a layer as errors do (relative to the workspace); `files` has its absolute path.
    const layer = files.find(
      (file) => origin !== undefined && (file === origin.file || file.endsWith(`/${origin.file}`)),
    );
    const home = io.env.HOME ?? "";
    // ~/ is the user's home; a relative path is relative to the manifest file that set it.
    apiKeyFile =
      written === "~" || written.startsWith("~/")
        ? join(home, written.slice(1))
        : isAbsolute(written)
          ? written
          : resolve(layer === undefined ? manifest.pod.pwd : dirname(layer), written);
  }
  const choice: ProviderChoice = {
    kind,
    model: provider.model,
    ...(provider.base_url === undefined ? {} : { baseURL: provider.base_url }),
    ...(apiKeyFile === undefined ? {} : { apiKeyFile }),
    ...(apiKeyFile !== undefined && setByWorkspace(origins, "provider.api_key_file")
      ? { keyFileWithin: manifest.pod.pwd }
      : {}),
  };
  checkKeyDestination(choice, origins);
  return choice;
}

const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * The text of the key file: a regular file (opened non-blocking, so a FIFO cannot hang the
 * run) of at most 64 KiB. When the workspace's own manifest named it, its real path must be
 * inside the workspace: a checkout does not choose which of the user's files is sent (a
 * `key.txt` committed as a symlink to `~/.git-credentials`, say).
 */
function readKeyFile(path: string, within: string | undefined, origins: ManifestOrigins): string {
  const where = at(origins, "provider.api_key_file");
  const refuse = (why: string, cause?: unknown) =>
    new CliError("API_KEY_UNREADABLE", `provider.api_key_file ${path} ${why}`, { cause, ...where });
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw refuse(
      `cannot be read (${(cause as NodeJS.ErrnoException).code ?? String(cause)}); create it with the key on one line, or fix the path`,
      cause,
    );
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) throw refuse("is not a regular file; point it at a file holding the key on one line");
    if (within !== undefined) {
      const real = openedPath(fd) ?? realpathSync(path);
      if (!isSameOrInside(realpathSync(within), real)) {
        throw new CliError(
          "UNTRUSTED_KEY_FILE",
          `this workspace's manifest names ${path} (really ${real}), outside the workspace, as the API key file; a checkout does not choose which of your files is sent, so nothing was read or sent. Set provider.api_key_file in your user manifest (~/.config/insomnia/pod.yaml), or pass --overlay 'provider.api_key_file = ${path}' or --manifest ${PROJECT_MANIFEST_PATH}`,
          where,
        );
      }
    }
    const bytes = readCapped(fd, stat.size, MAX_KEY_FILE_BYTES);
    if (bytes === undefined)
      throw refuse(`is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB; it should hold only the key`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The API key: `provider.api_key_file`, else the provider's variable; undefined only where none is needed. */
export async function apiKey(choice: ProviderChoice, origins: ManifestOrigins, io: CliIo): Promise<string | undefined> {
  if (choice.apiKeyFile !== undefined) {
    const key = readKeyFile(choice.apiKeyFile, choice.keyFileWithin, origins).trim();
    if (key === "") {
      throw new CliError(
        "NO_API_KEY",
        `provider.api_key_file ${choice.apiKeyFile} is empty; put the ${choice.kind} API key in it`,
        at(origins, "provider.api_key_file"),
      );
    }
    return key;
  }
  const variable = KEY_VARIABLE[choice.kind];
  if (variable === undefined) return undefined;
  const key = io.env[variable]?.trim();
  if (key === undefined || key === "") {
    throw new CliError(
      "NO_API_KEY",
      `no API key for ${choice.kind}: set ${variable}, or set provider.api_key_file in the manifest to a file holding the key; nothing was sent`,
    );
  }
  return key;
}

/**
 * The AI SDK model for the provider block; the provider package is loaded only here. Its
 * requests go through `providerFetch`: `env`'s proxy, and no redirect to another server.
 */
export async function languageModel(
  choice: ProviderChoice,
  key: string | undefined,
  env: ProxyEnv,
): Promise<LanguageModel> {
  const base = { fetch: providerFetch(env), ...(choice.baseURL === undefined ? {} : { baseURL: choice.baseURL }) };
  switch (choice.kind) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ ...base, apiKey: key ?? "" })(choice.model);
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ ...base, apiKey: key ?? "" })(choice.model);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: "openai-compatible",
        ...base,
        baseURL: choice.baseURL ?? "",
        ...(key === undefined ? {} : { apiKey: key }),
        includeUsage: true,
      })(choice.model);
    }
  }
}

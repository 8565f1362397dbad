import { readSmallFile } from "@insomnia/safe-read";
import { apiKeyFilePath, type ManifestOrigins, type PodManifest, workspaceRootOf } from "@insomnia/manifest";
import type { aiSdkClient } from "@insomnia/ai-sdk";
import { CliError } from "./cli-error.ts";
import type { CliIo } from "./io.ts";
import { type ProxyEnv, providerFetch } from "./provider-fetch.ts";
import { PROVIDER_KINDS, type ProviderKind, unknownProviderKind } from "./provider-kind.ts";

/** An AI SDK language model, as aiSdkClient takes it. */
export type LanguageModel = Parameters<typeof aiSdkClient>[0];

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
  /** Set when the workspace layer named `apiKeyFile`: the file must really be inside this directory (the workspace root). */
  keyFileWithin?: string;
}

/**
 * Checks the manifest's provider block; no block or an unknown kind is a coded error (exit 1).
 * Where requests and keys may go is the workspace trust check's (`checkWorkspaceTrust`, run
 * before this): an untrusted checkout cannot set a non-loopback base URL or a key file outside it.
 */
export function providerChoice(manifest: PodManifest, origins: ManifestOrigins, io: CliIo): ProviderChoice {
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
  const apiKeyFile = apiKeyFilePath(manifest, { ...io.env });
  const keyOrigin = origins["provider.api_key_file"];
  const choice: ProviderChoice = {
    kind,
    model: provider.model,
    ...(provider.base_url === undefined ? {} : { baseURL: provider.base_url }),
    ...(apiKeyFile === undefined ? {} : { apiKeyFile }),
    // An untrusted layer's key file passed the trust check; it must still be inside when opened
    // (a trusted layer's key file is what the user agreed to with pod trust).
    ...(apiKeyFile !== undefined && keyOrigin?.trusted === false ? { keyFileWithin: workspaceRootOf(manifest) } : {}),
  };
  return choice;
}

const MAX_KEY_FILE_BYTES = 64 * 1024;

/**
 * The text of the key file: a regular file (a FIFO is never opened, so it cannot hang the
 * run) of at most 64 KiB. When the workspace's own manifest named it, its real path must be
 * inside the workspace: a checkout does not choose which of the user's files is sent (a
 * `key.txt` committed as a symlink to `~/.git-credentials`, say).
 */
function readKeyFile(path: string, within: string | undefined, origins: ManifestOrigins): string {
  const where = at(origins, "provider.api_key_file");
  // Bytes as they are: the key is trimmed and checked by the provider, not here.
  const read = readSmallFile(path, { maxBytes: MAX_KEY_FILE_BYTES, within, decode: "bytes" });
  if (read.ok) return read.value.bytes.toString("utf8");
  const refuse = (why: string, cause?: unknown) =>
    new CliError("API_KEY_UNREADABLE", `provider.api_key_file ${path} ${why}`, { cause, ...where });
  switch (read.reason) {
    case "outside-root":
      throw new CliError(
        "UNTRUSTED_WORKSPACE",
        `provider.api_key_file reads the API key from ${read.real}, outside the workspace ${within}; a checkout does not choose which of your files is sent, so nothing was read or sent. Set provider.api_key_file in your user manifest or with --overlay`,
        where,
      );
    case "not-a-file":
      throw refuse("is not a regular file; point it at a file holding the key on one line");
    case "too-large":
      throw refuse(`is larger than ${MAX_KEY_FILE_BYTES / 1024} KiB; it should hold only the key`);
    case "replaced":
      throw refuse("was replaced while it was being read; run again");
    default: {
      const cause = "cause" in read ? read.cause : undefined;
      const errno = ("errno" in read ? read.errno : undefined) ?? (cause as NodeJS.ErrnoException | undefined)?.code;
      throw refuse(
        `cannot be read (${errno ?? String(cause)}); create it with the key on one line, or fix the path`,
        cause,
      );
    }
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

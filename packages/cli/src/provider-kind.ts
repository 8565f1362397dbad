import { didYouMeanSuffix } from "@insomnia/errors";
import type { ManifestOrigins, PodManifest } from "@insomnia/manifest";
import { CliError } from "./cli-error.ts";

/** The provider kinds `pod run` knows. */
export const PROVIDER_KINDS = ["anthropic", "openai", "openai-compatible"] as const;
/** One provider kind `pod run` knows. */
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

/** `NO_PROVIDER` at `provider.kind` when the manifest names a kind pod does not know (`pod check` and `pod run` both ask). */
export function unknownProviderKind(manifest: PodManifest, origins: ManifestOrigins): CliError | undefined {
  const kind = manifest.provider?.kind;
  if (kind === undefined || (PROVIDER_KINDS as readonly string[]).includes(kind)) return undefined;
  const origin = origins["provider.kind"];
  return new CliError(
    "NO_PROVIDER",
    `provider.kind "${kind}" is not one pod run knows${didYouMeanSuffix(kind, PROVIDER_KINDS)}; use ${PROVIDER_KINDS.join(", ")}`,
    origin === undefined ? {} : { file: origin.file, line: origin.line, column: origin.column },
  );
}

export {
  DEFAULT_COMPACT_AT,
  DEFAULT_COMPACT_INSTRUCTION,
  DEFAULT_INSTRUCTION,
  DEFAULT_MCP_STARTUP_TIMEOUT_MS,
  DEFAULT_MCP_TOOL_TIMEOUT_MS,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  DEFAULT_POD_NAME,
  DEFAULT_RUN_COMMAND_TIMEOUT_MS,
  DEFAULT_SKILLS_BUDGET,
  DEFAULT_TEMPERATURE,
  DEFAULT_WORKER_TOOLS,
  MAX_MANIFEST_BYTES,
  PROJECT_MANIFEST_PATH,
  WORKER_TOOL_NAMES,
} from "./defaults.ts";
export { loadManifest } from "./load-manifest.ts";
export type { LoadedManifest, LoadedWorkspace, LoadManifestOptions } from "./load-manifest.ts";
export { ManifestError } from "./manifest-error.ts";
export type { ManifestErrorCode, ManifestErrorOptions } from "./manifest-error.ts";
export type { ManifestOrigin, ManifestOrigins } from "./manifest-origins.ts";
export { projectManifestPath, userManifestPath } from "./manifest-paths.ts";
export { merge } from "./merge.ts";
export { parseManifestLayer, validateManifestLayer } from "./parse-manifest-layer.ts";
export { parseOverlay, validateOverlay } from "./parse-overlay.ts";
export { readManifestFile } from "./read-manifest-file.ts";
export type { ReadManifestFileOptions } from "./read-manifest-file.ts";
export { resolveManifest } from "./resolve-manifest.ts";
export type { ResolveManifestOptions } from "./resolve-manifest.ts";
export type {
  ManifestLayerResult,
  ManifestMcpServer,
  ManifestPricing,
  ManifestProvider,
  ManifestScopeRule,
  PartialManifest,
  PodManifest,
} from "./types.ts";
export { findWorkspace } from "./find-workspace.ts";
export type { FindWorkspaceOptions, WorkspaceLocation } from "./find-workspace.ts";
export type { ManifestLayerInfo, ManifestLayerKind } from "./manifest-origins.ts";
export { manifestProvenance } from "./manifest-provenance.ts";
export type { ManifestProvenance } from "./manifest-provenance.ts";
export { userConfigDir, userHome } from "./manifest-paths.ts";
export {
  isLayerTrusted,
  layerDigest,
  listTrustRecords,
  readTrustRecord,
  realDirectory,
  removeTrustRecord,
  trustStoreDir,
  writeTrustRecord,
} from "./trust-store.ts";
export type { TrustRecord } from "./trust-store.ts";
export {
  apiKeyFilePath,
  checkWorkspaceTrust,
  findWidenings,
  isLoopbackHost,
  realPathOf,
  untrustedWidenings,
  untrustedWorkspaceError,
  WIDENING_RULES,
  workspaceRootOf,
} from "./workspace-trust.ts";
export type { ManifestWidening, WideningContext, WideningRule, WorkspaceTrustOptions } from "./workspace-trust.ts";

import { join } from "node:path";
import {
  findWidenings,
  findWorkspace,
  layerDigest,
  listTrustRecords,
  loadManifest,
  PROJECT_MANIFEST_PATH,
  projectManifestPath,
  readManifestFile,
  realDirectory,
  removeTrustRecord,
  writeTrustRecord,
} from "@insomnia/manifest";
import type { TrustOptions } from "../args.ts";
import { CliError } from "../cli-error.ts";
import type { CliIo } from "../io.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";
import { trustLines } from "../trust-lines.ts";

/**
 * `pod trust`: records the workspace's real path with the SHA-256 of its `.insomnia/pod.yaml`
 * (printing what that layer grants); `--list` shows the records, `--revoke` removes one.
 * It asks nothing: running it is the user's decision.
 */
export async function runTrust(options: TrustOptions, io: CliIo): Promise<number> {
  const env = { ...io.env };
  if (options.list) return listTrusted(io, env);
  const cwd = await resolveWorkspaceDir(options.cwd, io.cwd);
  const { root } = findWorkspace(cwd, env);
  const real = realDirectory(root);
  if (options.revoke) {
    const removed = await removeTrustRecord(real, env);
    io.stdout.write(
      removed ? `revoked: ${real} is no longer trusted\n` : `${real} was not trusted; nothing to revoke\n`,
    );
    return 0;
  }

  const layer = projectManifestPath(root);
  const text = await readManifestFile(layer, { optional: true });
  if (text === undefined) {
    throw new CliError(
      "NO_WORKSPACE_LAYER",
      `no ${PROJECT_MANIFEST_PATH} in ${cwd} or above it (up to the repository root); there is nothing to trust`,
    );
  }
  // Loaded as a pod would load it (a broken layer is an error, never trusted), trusted for the listing.
  const { manifest } = await loadManifest({ cwd, env, trustWorkspace: true });
  // The text hashed is the text just checked: a layer changed in between is trusted by no one.
  if ((await readManifestFile(layer, { optional: true })) !== text) {
    throw new CliError("USAGE", `${layer} changed while it was being trusted; review it and run pod trust again`);
  }
  const grants = findWidenings(manifest, { env }).map(({ key, grants: what, origin }) => ({
    key,
    grants: what,
    file: origin.file,
    line: origin.line,
    column: origin.column,
  }));
  const record = await writeTrustRecord(real, text, env);
  io.stdout.write(`trusted ${real} with ${layer} as it is now (sha256 ${record.sha256.slice(0, 16)}…)\n`);
  io.stdout.write(trustLines({ root: real, manifest: layer, trusted: true, grants }));
  return 0;
}

/** One line per trusted workspace: its path, whether its manifest is still the one trusted, and when. */
async function listTrusted(io: CliIo, env: NodeJS.ProcessEnv): Promise<number> {
  const records = await listTrustRecords(env);
  if (records.length === 0) {
    io.stdout.write("no trusted workspaces\n");
    return 0;
  }
  for (const record of records) {
    const text = await readManifestFile(join(record.path, PROJECT_MANIFEST_PATH), { optional: true }).catch(
      () => undefined,
    );
    const state =
      text === undefined
        ? "manifest missing"
        : (await layerDigest(text)) === record.sha256
          ? "trusted"
          : "manifest changed since trusted: untrusted until pod trust runs again";
    io.stdout.write(`${record.path}  ${state}  (trusted ${record.trustedAt})\n`);
  }
  return 0;
}

import { constants, realpathSync } from "node:fs";
import { chmod, mkdir, open, readdir, rename, rm, stat } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ManifestError } from "./manifest-error.ts";
import { userConfigDir } from "./manifest-paths.ts";

/** One trusted workspace: its real path and the SHA-256 of the layer text the user trusted. */
export interface TrustRecord {
  /** Real path of the workspace root. */
  readonly path: string;
  /** Hex SHA-256 of the workspace layer's text (UTF-8) when it was trusted. */
  readonly sha256: string;
  /** When `pod trust` recorded it (ISO 8601). */
  readonly trustedAt: string;
}

const MAX_RECORD_BYTES = 64 * 1024;

/**
 * Hex SHA-256 of a layer's text: what a trust record pins. node:crypto is loaded here, on
 * first use, so a run in an untrusted workspace (no record to compare with) never loads it.
 */
export async function layerDigest(text: string): Promise<string> {
  const { createHash } = await import("node:crypto");
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** Where trust records live: `<config>/insomnia/trust` (`$XDG_CONFIG_HOME`, else `~/.config`); undefined without a home. */
export function trustStoreDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const config = userConfigDir(env);
  return config === undefined ? undefined : join(config, "trust");
}

/** The real path of a directory, or the path as given when it cannot be resolved. */
export function realDirectory(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/**
 * One file per workspace, so two `pod trust` runs never rewrite each other's records, named by
 * a 64-bit FNV-1a hash of its real path (no node:crypto at start-up). The record holds the
 * path and is checked on read: a collision can only make a workspace untrusted, never trusted.
 */
function recordPath(dir: string, realRoot: string): string {
  let hash = 0xcbf29ce484222325n;
  for (const byte of Buffer.from(realRoot, "utf8"))
    hash = ((hash ^ BigInt(byte)) * 0x100000001b3n) & 0xffffffffffffffffn;
  return join(dir, `${hash.toString(16).padStart(16, "0")}.json`);
}

/** Reads one record file; anything that is not a small regular file holding a well-formed record counts as none. */
async function readRecordFile(path: string): Promise<TrustRecord | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    return undefined;
  }
  try {
    const info = await handle.stat();
    if (!info.isFile() || info.size > MAX_RECORD_BYTES) return undefined;
    const parsed: unknown = JSON.parse(await handle.readFile("utf8"));
    if (parsed === null || typeof parsed !== "object") return undefined;
    const { path: root, sha256, trustedAt } = parsed as Record<string, unknown>;
    if (typeof root !== "string" || typeof sha256 !== "string" || !/^[0-9a-f]{64}$/.test(sha256)) return undefined;
    return { path: root, sha256, trustedAt: typeof trustedAt === "string" ? trustedAt : "" };
  } catch {
    return undefined;
  } finally {
    await handle.close();
  }
}

/** The record of the workspace whose real root is `realRoot`, if the user trusted it. */
export async function readTrustRecord(
  realRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TrustRecord | undefined> {
  const dir = trustStoreDir(env);
  if (dir === undefined) return undefined;
  const record = await readRecordFile(recordPath(dir, realRoot));
  return record?.path === realRoot ? record : undefined;
}

/** Whether the user trusted exactly this layer text for the workspace at `realRoot` (an edited layer is not). */
export async function isLayerTrusted(
  realRoot: string,
  text: string,
  env: NodeJS.ProcessEnv = process.env,
): Promise<boolean> {
  const record = await readTrustRecord(realRoot, env);
  return record !== undefined && record.sha256 === (await layerDigest(text));
}

/** Every trust record, sorted by path. */
export async function listTrustRecords(env: NodeJS.ProcessEnv = process.env): Promise<TrustRecord[]> {
  const dir = trustStoreDir(env);
  if (dir === undefined) return [];
  const names = await readdir(dir).catch(() => [] as string[]);
  const records = await Promise.all(
    names.filter((name) => /^[0-9a-f]{16}\.json$/.test(name)).map((name) => readRecordFile(join(dir, name))),
  );
  return records.filter((record) => record !== undefined).sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * Creates `dir` and each missing parent `0700` whatever the umask; directories that exist
 * keep their mode (an existing one is never loosened).
 */
async function makePrivateDirectory(dir: string): Promise<void> {
  const missing: string[] = [];
  for (let current = dir; ; current = dirname(current)) {
    if ((await stat(current).catch(() => undefined)) !== undefined) break;
    missing.unshift(current);
    if (dirname(current) === current) break;
  }
  for (const path of missing) {
    await mkdir(path, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "EEXIST") throw error;
    });
    await chmod(path, 0o700);
  }
}

/**
 * Records that the user trusts the workspace at `realRoot` with this layer text: a `0600` file
 * (written to a temporary name, then renamed) in a `0700` directory, whatever the umask.
 */
export async function writeTrustRecord(
  realRoot: string,
  text: string,
  env: NodeJS.ProcessEnv = process.env,
  now: Date = new Date(),
): Promise<TrustRecord> {
  const dir = trustStoreDir(env);
  if (dir === undefined) {
    throw new ManifestError(
      "NO_CONFIG_DIR",
      "no config directory to keep trust records in: set HOME or XDG_CONFIG_HOME",
    );
  }
  await makePrivateDirectory(dir);
  const record: TrustRecord = { path: realRoot, sha256: await layerDigest(text), trustedAt: now.toISOString() };
  const target = recordPath(dir, realRoot);
  const { randomUUID } = await import("node:crypto");
  const temporary = `${target}.${randomUUID()}.tmp`;
  const handle = await open(temporary, "wx", 0o600);
  try {
    await handle.chmod(0o600);
    await handle.writeFile(`${JSON.stringify(record, null, 2)}\n`);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return record;
}

/** Removes the record of the workspace at `realRoot`; false when there was none. */
export async function removeTrustRecord(realRoot: string, env: NodeJS.ProcessEnv = process.env): Promise<boolean> {
  const dir = trustStoreDir(env);
  if (dir === undefined) return false;
  const path = recordPath(dir, realRoot);
  if ((await readRecordFile(path)) === undefined) return false;
  await rm(path, { force: true });
  return true;
}

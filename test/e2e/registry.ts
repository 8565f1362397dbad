import { type ChildProcess, spawn } from "node:child_process";
import { writeFileSync, mkdirSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** A throwaway Verdaccio on 127.0.0.1 with its own storage and config. */
export interface LocalRegistry {
  url: string;
  /** An npm userconfig file holding a token for this registry. */
  userconfig: string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function waitForPing(url: string, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 300; attempt++) {
    if (child.exitCode !== null) throw new Error(`verdaccio exited early (${child.exitCode}):\n${log()}`);
    try {
      const response = await fetch(`${url}-/ping`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`verdaccio did not answer on ${url}:\n${log()}`);
}

/** Starts Verdaccio from the repo's devDependency, creates a user and returns its token config. */
export async function startRegistry(repoRoot: string, dir: string): Promise<LocalRegistry> {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    [
      `storage: ${JSON.stringify(join(dir, "storage"))}`,
      "auth:",
      "  htpasswd:",
      `    file: ${JSON.stringify(join(dir, "htpasswd"))}`,
      "    max_users: 10",
      "uplinks: {}",
      "packages:",
      "  '@insomnia/*':",
      "    access: $all",
      "    publish: $authenticated",
      "  '**':",
      "    access: $all",
      "log: { type: stdout, format: pretty, level: warn }",
      "",
    ].join("\n"),
  );
  let output = "";
  const child = spawn(
    process.execPath,
    [
      join(repoRoot, "node_modules", "verdaccio", "bin", "verdaccio"),
      "--config",
      config,
      "--listen",
      `127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", "pipe", "pipe"], detached: false },
  );
  child.stdout?.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (output += d.toString()));
  const kill = () => child.kill("SIGKILL");
  process.once("exit", kill);
  const stop = async () => {
    process.off("exit", kill);
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    await waitForPing(url, child, () => output);
    const response = await fetch(`${url}-/user/org.couchdb.user:ci`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "ci", password: "ci-password-for-a-throwaway-registry" }),
    });
    const body = (await response.json()) as { token?: string; error?: string };
    if (!body.token) throw new Error(`could not create a registry user: ${JSON.stringify(body)}`);
    const userconfig = join(dir, "npmrc");
    writeFileSync(userconfig, `//127.0.0.1:${port}/:_authToken=${body.token}\n`);
    return { url, userconfig, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

import { execFile } from "node:child_process";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, inject } from "vitest";
import type { OutputStream } from "../output.ts";

/** The built `pod` bin (dist/bin.cjs): the tests run what the package ships. */
export const BIN = fileURLToPath(new URL("../../dist/bin.cjs", import.meta.url));

/** Exit status and output of one `pod` process. */
export interface PodRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The built library (dist/index.js): the same `main` as the bin's bundle (dist/pod.cjs) runs, from the same sources. */
const LIBRARY = new URL("../../dist/index.js", import.meta.url).href;

/**
 * Runs the built library's `main` in this process, with exactly `env` (plus PATH) and `cwd`:
 * what a command computes, without the cost of starting a process. Runs through the bin
 * (`runPod`) test what only a process has: the bundle and its compile cache, signals and the
 * exit, what Node reads as it starts, state that only a new process starts without (the
 * secrets to hide, caches), and a leak through `process.env`, which here is not the run's.
 */
export async function runPodInProcess(
  args: readonly string[],
  options: { cwd: string; env: Record<string, string>; stdin?: string },
): Promise<PodRun> {
  const { main } = (await import(/* @vite-ignore */ LIBRARY)) as typeof import("../index.ts");
  const stdout = collector();
  const stderr = collector();
  const code = await main(args, {
    stdout,
    stderr,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    cwd: options.cwd,
    stdin: Readable.from([Buffer.from(options.stdin ?? "")]),
    signal: new AbortController().signal,
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

/** An output stream that keeps what `pod` wrote to it. */
export function collector(): OutputStream & { text: string } {
  const sink = {
    text: "",
    write(chunk: string) {
      sink.text += chunk;
      return true;
    },
  };
  return sink;
}

/** Runs the built `pod` bin as a real process with exactly `env` (plus PATH). */
export function runPod(
  args: readonly string[],
  options: { cwd: string; env: Record<string, string> },
): Promise<PodRun> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      {
        cwd: options.cwd,
        env: { PATH: process.env.PATH ?? "", ...options.env },
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolvePromise({ code, stdout, stderr });
      },
    );
  });
}

/** A temp sandbox: a workspace directory and a HOME/XDG_CONFIG_HOME that are not the real ones. */
export interface Sandbox {
  /** Real path of the workspace directory (the pod's cwd). */
  ws: string;
  /** XDG_CONFIG_HOME; `$user` prompts live in `<xdg>/insomnia/prompts`. */
  xdg: string;
  home: string;
  env: Record<string, string>;
  /** Writes a file under `root` (default: the workspace), creating directories. */
  write(relative: string, text: string, root?: string): Promise<string>;
  cleanup(): Promise<void>;
}

/** The environment of a `pod run` against a local fake provider: the sandbox's, a state dir inside it, test keys. */
export function fakeProviderEnv(box: Sandbox): Record<string, string> {
  return {
    ...box.env,
    XDG_STATE_HOME: join(box.home, "state"),
    ANTHROPIC_API_KEY: "sk-ant-test",
    OPENAI_API_KEY: "sk-test",
  };
}

/** How a sandbox's `pod` processes keep the bin's compile cache. */
export interface SandboxOptions {
  /**
   * true: in the sandbox's own HOME (`~/.cache`), as for a new user, for the tests of the cache
   * itself. Default: in one XDG_CACHE_HOME shared by the whole test run (warm after the first
   * process, as for a user's every later run), so each test does not pay a cold start.
   */
  readonly ownCompileCache?: boolean;
}

/** Creates a sandbox under os.tmpdir(); call cleanup() in afterEach. */
export async function makeSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const root = await realpath(await mkdtemp(join(tmpdir(), "pod-cli-")));
  const ws = join(root, "ws");
  const xdg = join(root, "xdg");
  const home = join(root, "home");
  await Promise.all([mkdir(ws), mkdir(xdg), mkdir(home)]);
  return {
    ws,
    xdg,
    home,
    env: {
      HOME: home,
      XDG_CONFIG_HOME: xdg,
      ...(options.ownCompileCache === true ? {} : { XDG_CACHE_HOME: inject("podCacheHome") }),
    },
    async write(relative, text, base = ws) {
      const path = join(base, relative);
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, text);
      return path;
    },
    cleanup: () => rm(root, { recursive: true, force: true }),
  };
}

/**
 * A fresh sandbox for every test of the calling file (made in beforeEach, removed in
 * afterEach): `box` always stands for the current test's sandbox; `pod` runs the CLI in it in
 * this process, `podProcess` runs the bin.
 */
export function useSandbox(options: SandboxOptions = {}): {
  box: Sandbox;
  pod: (...args: string[]) => Promise<PodRun>;
  podProcess: (...args: string[]) => Promise<PodRun>;
} {
  let current: Sandbox | undefined;
  beforeEach(async () => {
    current = await makeSandbox(options);
  });
  afterEach(async () => {
    await current?.cleanup();
    current = undefined;
  });
  const now = (): Sandbox => {
    if (current === undefined) throw new Error("useSandbox: the sandbox exists only while a test runs");
    return current;
  };
  const box = new Proxy({} as Sandbox, { get: (_target, key) => Reflect.get(now(), key) });
  return {
    box,
    pod: (...args) => runPodInProcess(args, { cwd: now().ws, env: now().env }),
    podProcess: (...args) => runPod(args, { cwd: now().ws, env: now().env }),
  };
}

import type { OutputStream } from "./output.ts";

/** What `main` reads and writes instead of touching `process` directly. */
export interface CliIo {
  /** Results go here. */
  stdout: OutputStream;
  /** Errors and warnings go here. */
  stderr: OutputStream;
  /** Environment: HOME, XDG_CONFIG_HOME, NO_COLOR, FORCE_COLOR. */
  env: Readonly<Record<string, string | undefined>>;
  /** Directory relative flags (--cwd, --manifest) are resolved against. */
  cwd: string;
  /** Where `pod run` reads its message when given no words (default: process.stdin). */
  stdin?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Aborted to stop a running turn (default: the first Ctrl-C, SIGINT, of this process). */
  signal?: AbortSignal;
}

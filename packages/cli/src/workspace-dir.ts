import { stat } from "node:fs/promises";
import { resolve } from "node:path";
import { CliError } from "./cli-error.ts";

/** Resolves `--cwd` against the process directory and checks that it is a directory. */
export async function resolveWorkspaceDir(flag: string | undefined, base: string): Promise<string> {
  const dir = resolve(base, flag ?? ".");
  const info = await stat(dir).catch(() => undefined);
  if (info === undefined) throw new CliError("BAD_CWD", `--cwd ${dir}: no such directory`);
  if (!info.isDirectory()) throw new CliError("BAD_CWD", `--cwd ${dir}: not a directory`);
  return dir;
}

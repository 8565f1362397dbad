import { access, mkdir, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { InitOptions } from "../args.ts";
import { CliError } from "../cli-error.ts";
import { INIT_INSTRUCTION_PATH, INIT_MANIFEST_PATH, initInstructionText, initManifestText } from "../init-files.ts";
import type { CliIo } from "../io.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** `pod init`: writes a starter manifest and instruction; never overwrites without --force. */
export async function runInit(options: InitOptions, io: CliIo): Promise<number> {
  const dir = await resolveWorkspaceDir(options.cwd, io.cwd);
  const files = [
    { relative: INIT_MANIFEST_PATH, text: initManifestText() },
    { relative: INIT_INSTRUCTION_PATH, text: initInstructionText() },
  ].map((file) => ({ ...file, path: join(dir, file.relative) }));

  // Check every file before writing any, so a refusal leaves the workspace as it was.
  if (!options.force) {
    for (const file of files) {
      if (await exists(file.path)) {
        throw new CliError("FILE_EXISTS", `${file.relative} already exists; pass --force to overwrite it`, {
          file: file.path,
        });
      }
    }
  }
  for (const file of files) {
    await mkdir(dirname(file.path), { recursive: true });
    try {
      await writeFile(file.path, file.text, { flag: options.force ? "w" : "wx" });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      throw new CliError("FILE_EXISTS", `${file.relative} already exists; pass --force to overwrite it`, {
        file: file.path,
        cause: error,
      });
    }
    io.stdout.write(`wrote ${file.relative}\n`);
  }
  io.stdout.write(`Next: edit ${INIT_INSTRUCTION_PATH}, then run 'pod check' and 'pod prompt'.\n`);
  return 0;
}

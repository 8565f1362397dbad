// Copies the repo's resources/prompts into this package's prompts/ (shipped in the tarball). It
// syncs in place (write-to-temp + rename per file, then prune) instead of delete-and-copy, because
// `build` and the test globalSetup may run at the same time and a reader must never see a missing file.
import { randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const source = path.resolve(packageDir, "../../resources/prompts");
const target = path.join(packageDir, "prompts");

/** Writes `bytes` to `file` through a temp file and a rename, so a reader sees the old or the new file. */
async function replaceFile(file, bytes) {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  await writeFile(temp, bytes);
  await rename(temp, file);
}

/** Makes `to` hold exactly the regular files of `from` (symlinks followed), recursively. */
async function sync(from, to) {
  await mkdir(to, { recursive: true });
  const names = new Set();
  for (const name of await readdir(from)) {
    const src = path.join(from, name);
    const dst = path.join(to, name);
    const info = await stat(src);
    if (info.isDirectory()) {
      names.add(name);
      await sync(src, dst);
    } else if (info.isFile()) {
      names.add(name);
      const bytes = await readFile(src);
      const existing = await readFile(dst).catch(() => undefined);
      if (existing?.equals(bytes)) continue;
      await replaceFile(dst, bytes);
    }
  }
  for (const name of await readdir(to)) {
    if (!names.has(name) && !name.endsWith(".tmp")) {
      await rm(path.join(to, name), { recursive: true, force: true });
    }
  }
}

/** Copies resources/prompts to prompts/ (an absent source yields an empty prompts/). */
export default async function copyPrompts() {
  const exists = await stat(source).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (exists) await sync(source, target);
  else await mkdir(target, { recursive: true });
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await copyPrompts();
}

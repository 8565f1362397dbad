// Copies the repo's resources/prompts into this package's prompts/ (shipped in the tarball), and
// writes prompts/sha256.json: each builtin prompt's text as the loader reads it, with its SHA-256
// (src/known-sha256.ts). It syncs in place (write-to-temp + rename per file, then prune) instead of
// delete-and-copy, because `build` and the test globalSetup may run at the same time and a reader
// must never see a missing file.
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const packageDir = fileURLToPath(new URL("..", import.meta.url));
const source = path.resolve(packageDir, "../../resources/prompts");
const target = path.join(packageDir, "prompts");
/** The digest table's name in prompts/ (not a prompt: only `.md` files are). */
const DIGESTS = "sha256.json";

/** Writes `bytes` to `file` through a temp file and a rename, so a reader sees the old or the new file. */
async function replaceFile(file, bytes) {
  const temp = path.join(
    path.dirname(file),
    `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`,
  );
  await writeFile(temp, bytes);
  await rename(temp, file);
}

/** Makes `to` hold exactly the regular files of `from` (symlinks followed), recursively; `keep` is left alone. */
async function sync(from, to, keep = new Set()) {
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
    if (!names.has(name) && !keep.has(name) && !name.endsWith(".tmp")) {
      await rm(path.join(to, name), { recursive: true, force: true });
    }
  }
}

/**
 * The text of a prompt file as the loader yields it: strict UTF-8, one BOM stripped, CRLF and CR
 * made LF (src/decode-prompt-text.ts; this script runs before the package is built, so it cannot
 * import it: known-sha256.test.ts checks that every table entry is the text the loader reads).
 */
function loadedText(bytes) {
  const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  return (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).replace(/\r\n?/g, "\n");
}

/** Writes prompts/sha256.json for the `.md` files under prompts/. */
async function writeDigests() {
  const names = (await readdir(target, { recursive: true })).filter((name) => name.endsWith(".md")).sort();
  const prompts = [];
  for (const name of names) {
    const text = loadedText(await readFile(path.join(target, name)));
    prompts.push({ text, sha256: createHash("sha256").update(text, "utf8").digest("hex") });
  }
  const json = `${JSON.stringify({ prompts })}\n`;
  const file = path.join(target, DIGESTS);
  const existing = await readFile(file, "utf8").catch(() => undefined);
  if (existing !== json) await replaceFile(file, json);
}

/** Copies resources/prompts to prompts/ (an absent source yields an empty prompts/) and writes the digests. */
export default async function copyPrompts() {
  const exists = await stat(source).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (exists) await sync(source, target, new Set([DIGESTS]));
  else await mkdir(target, { recursive: true });
  await writeDigests();
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await copyPrompts();
}

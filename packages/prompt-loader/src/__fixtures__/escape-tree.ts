import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Writes files and symlinks below one base directory. */
export interface TreeWriter {
  /** Writes `content` to `<base>/<path>`, creating directories. */
  file(path: string, content: string | Uint8Array): Promise<void>;
  /** Creates the symlink `<base>/<path>` pointing at `target` (as written). */
  link(target: string, path: string): Promise<void>;
}

/**
 * The tree both loader suites attack, below `base`:
 * - outside every root: `secret.md`, `secret/secret.md`, `user-evil/secret.md` (holding `secret`);
 * - `user/` ($user): ordinary files, links that point back out (relative, absolute, through
 *   `..`, to a sibling directory), a self-loop, `/dev/null`, a directory named `x.md`, a FIFO
 *   `pipe.md` where mkfifo exists;
 * - `ws-real/` reached through the symlink `workspace` ($workspace), with a link out;
 * - `builtin/` ($insomnia), with links to the secret and to `user/`.
 * Returns the writer, for the files a suite adds.
 */
export async function writeEscapeTree(base: string, secret: string): Promise<TreeWriter> {
  const tree: TreeWriter = {
    async file(path, content) {
      await mkdir(join(base, path, ".."), { recursive: true });
      await writeFile(join(base, path), content);
    },
    link: (target, path) => symlink(target, join(base, path)),
  };
  const { file, link } = tree;
  await file("secret.md", secret);
  await file("secret/secret.md", secret);
  await file("user-evil/secret.md", secret);
  await file("user/ok.md", "user ok");
  await file("user/dir/ok.md", "user dir ok");
  await link("../ok.md", "user/dir/inner.md");
  await link("..", "user/dir/up");
  await link("../..", "user/dir/upup");
  await link("../secret.md", "user/link-out.md");
  await link(join(base, "secret.md"), "user/abs-out.md");
  await link("..", "user/dir-out");
  await link(join(base, "secret"), "user/abs-dir-out");
  await link("../user-evil", "user/sib");
  await link("loop.md", "user/loop.md");
  await link("/dev/null", "user/dev.md");
  await mkdir(join(base, "user/x.md"));
  try {
    execFileSync("mkfifo", [join(base, "user/pipe.md")]);
  } catch {
    // No mkfifo here: the FIFO name is then simply missing (NOT_FOUND).
  }
  await file("ws-real/ok.md", "workspace ok");
  await link("../secret.md", "ws-real/link-out.md");
  await link("ws-real", "workspace");
  await file("builtin/ok.md", "builtin ok");
  await link("../secret.md", "builtin/secret.md");
  await link("../user", "builtin/user");
  return tree;
}

import { execFileSync } from "node:child_process";
import { createHash, randomUUID } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";

/** A workspace with every kind of path the escape suite attacks, on disk in a temp directory. */
export interface EscapeTree {
  readonly root: string;
  /** A fake home with `.ssh/id_rsa`. */
  readonly home: string;
  /** The pod's pwd: writable, a git repository with a commit. */
  readonly ws: string;
  /** A readable (read-only) target. */
  readonly data: string;
  /** A non-recursive readable target with `top.txt` and `sub/deep.txt`. */
  readonly flat: string;
  /** Not in the scope at all. */
  readonly outside: string;
  /** Text of every secret file; none may ever appear in a command's output. */
  readonly secrets: readonly string[];
  readonly scope: Scope;
  /** Path -> kind and content digest of everything under `root` except the writable workspace's ordinary files. */
  snapshot(): Map<string, string>;
  cleanup(): void;
}

/** Builds the tree: `ws` writable with `secret/` and `denied.txt` denied, `data` readable, `flat` readable non-recursively. */
export function makeEscapeTree(): EscapeTree {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "insomnia-sandbox-")));
  const secret = (name: string): string => `${name}-${randomUUID()}`;
  const secrets = {
    key: secret("FAKE-PRIVATE-KEY"),
    denied: secret("DENIED-FILE"),
    dir: secret("DENIED-DIR"),
    deep: secret("BEYOND-NON-RECURSIVE"),
    outside: secret("OUTSIDE-SCOPE"),
  };
  const write = (path: string, text: string): void => {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, text);
  };
  const home = join(root, "home");
  const ws = join(root, "ws");
  const data = join(root, "data");
  const flat = join(root, "flat");
  const outside = join(root, "outside");
  write(join(home, ".ssh", "id_rsa"), `-----BEGIN OPENSSH PRIVATE KEY-----\n${secrets.key}\n`);
  write(join(ws, "src", "main.txt"), "line one\n");
  write(join(ws, "denied.txt"), secrets.denied);
  write(join(ws, "secret", "key.txt"), secrets.dir);
  write(join(data, "info.txt"), "readable data\n");
  write(join(flat, "top.txt"), "top of flat\n");
  write(join(flat, "sub", "deep.txt"), secrets.deep);
  write(join(outside, "file.txt"), secrets.outside);
  const git = (...args: string[]): void => {
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd: ws, stdio: "ignore" });
  };
  git("init", "-q", "-b", "main", ".");
  write(join(ws, ".gitignore"), "denied.txt\nsecret/\n");
  git("add", "-A");
  git("commit", "-q", "-m", "first");
  const scope = Scope.fromConfig(
    {
      allow: [
        { target: "ws", permission: "write" },
        { target: "data", permission: "read" },
        { target: "flat", permission: "read", recursive: false },
      ],
      deny: [
        { target: "ws/secret", permission: "read" },
        { target: "ws/denied.txt", permission: "read" },
      ],
    },
    root,
  );
  const snapshot = (): Map<string, string> => {
    const seen = new Map<string, string>();
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir).sort()) {
        const path = join(dir, name);
        const ordinaryWorkspaceFile =
          dir === ws && name !== ".git" && name !== "denied.txt" && name !== "secret" && name !== ".gitignore";
        if (ordinaryWorkspaceFile) continue;
        const stat = lstatSync(path);
        if (stat.isSymbolicLink()) seen.set(path, `link ${readlinkSync(path)}`);
        else if (stat.isDirectory()) {
          seen.set(path, `dir ${(stat.mode & 0o7777).toString(8)}`);
          walk(path);
        } else {
          const digest = createHash("sha256").update(readFileSync(path)).digest("hex");
          seen.set(path, `file ${(stat.mode & 0o7777).toString(8)} ${stat.nlink} ${digest}`);
        }
      }
    };
    walk(root);
    return seen;
  };
  return {
    root,
    home,
    ws,
    data,
    flat,
    outside,
    secrets: Object.values(secrets),
    scope,
    snapshot,
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** Processes of this machine whose command line contains `marker` (read from /proc, outside any sandbox). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(marker)) found.push(Number(name));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

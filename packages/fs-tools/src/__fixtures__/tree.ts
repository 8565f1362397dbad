import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { Scope, type ScopeConfig } from "@insomnia/scope";
import { ToolServer } from "@insomnia/worker";
import type { FsTool as Tool } from "../fs-tool.ts";
import { fsTools, type FsToolsOptions } from "../fs-tools.ts";

/** A temp directory with helpers to lay out files; `remove()` deletes it. */
export interface Box {
  readonly root: string;
  write(relative: string, content: string | Buffer): string;
  dir(relative: string): string;
  fifo(relative: string): string;
  remove(): void;
}

/** A fresh directory (real path) for one test, on tmpfs when there is one so fsync is cheap. */
export function makeBox(prefix = "fs-tools-"): Box {
  const root = realpathSync(mkdtempSync(join(tmpdir(), prefix)));
  return {
    root,
    write(relative, content) {
      const file = join(root, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, content);
      return file;
    },
    dir(relative) {
      const dir = join(root, relative);
      mkdirSync(dir, { recursive: true });
      return dir;
    },
    fifo(relative) {
      const file = join(root, relative);
      mkdirSync(dirname(file), { recursive: true });
      execFileSync("mkfifo", [file]);
      return file;
    },
    remove() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The tools by name, over a scope built from `config` at `base`. */
export function toolsFor(config: ScopeConfig, base: string, options: FsToolsOptions = {}): Record<string, Tool> {
  return byName(fsTools(Scope.fromConfig(config, base), options));
}

/** Tools keyed by name. */
export function byName(tools: readonly Tool[]): Record<string, Tool> {
  return Object.fromEntries(tools.map((tool) => [tool.name, tool]));
}

/** A ToolServer holding the file tools, so a call comes back as the model would see it. */
export function serverFor(scope: Scope, options: FsToolsOptions = {}): ToolServer {
  const server = new ToolServer();
  for (const tool of fsTools(scope, options)) server.register(tool);
  return server;
}

/** Calls a tool and returns its text, or the refusal's code and message. */
export async function outcome(
  tool: Tool,
  input: unknown,
): Promise<{ ok: true; text: string } | { ok: false; code: string; message: string }> {
  try {
    return { ok: true, text: await tool.execute(input) };
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { ok: false, code, message };
  }
}

/**
 * A real Scope whose `explain` runs `hook` after answering (once, on the call number
 * `when`, counting from 1): a deterministic "the file system changed right after the check".
 */
export function scopeWithHook(scope: Scope, when: number, hook: () => void): Scope {
  let calls = 0;
  const wrapper = {
    base: scope.base,
    readable: scope.readable,
    writable: scope.writable,
    permissionAt: (p: string) => scope.permissionAt(p),
    explain: (p: string, options?: { resolved?: boolean }) => {
      const answer = scope.explain(p, options);
      calls += 1;
      if (calls === when) hook();
      return answer;
    },
  };
  return wrapper as unknown as Scope;
}

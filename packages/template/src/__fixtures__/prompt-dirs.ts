import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { PromptLoader } from "@insomnia/prompt-loader";
import type { RenderContext } from "../render-data.ts";

/** Three prompt roots in a temp dir, and a loader over them. */
export interface PromptDirs {
  readonly root: string;
  readonly dirs: { readonly $insomnia: string; readonly $user: string; readonly $workspace: string };
  readonly loader: PromptLoader;
  /** Writes the file behind a canonical ref ("$user/team/main") and returns its real path. */
  write(ref: string, text: string): string;
  /** The real path a ref resolves to. */
  fileOf(ref: string): string;
  cleanup(): void;
}

/** Creates empty $insomnia, $user and $workspace roots under a fresh temp dir. */
export function makePromptDirs(): PromptDirs {
  const root = realpathSync(mkdtempSync(path.join(tmpdir(), "insomnia-template-")));
  const dirs = {
    $insomnia: path.join(root, "builtin"),
    $user: path.join(root, "user"),
    $workspace: path.join(root, "project", ".insomnia", "prompts"),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  const fileOf = (ref: string): string => {
    const slash = ref.indexOf("/");
    const prefix = ref.slice(0, slash) as keyof typeof dirs;
    return `${path.join(dirs[prefix], ...ref.slice(slash + 1).split("/"))}.md`;
  };
  return {
    root,
    dirs,
    loader: new PromptLoader({ builtinDir: dirs.$insomnia, userDir: dirs.$user, workspaceDir: dirs.$workspace }),
    write(ref, text) {
      const file = fileOf(ref);
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, text);
      return file;
    },
    fileOf,
    cleanup() {
      rmSync(root, { recursive: true, force: true });
    },
  };
}

/** A fixed render context: 2026-11-30T16:37:00Z, cwd /repo, two tools. */
export function sampleContext(overrides: Partial<RenderContext> = {}): RenderContext {
  return {
    now: new Date(Date.UTC(2026, 10, 30, 16, 37, 0)),
    cwd: "/repo",
    scope: {
      readable: ["/repo", "/docs"],
      writable: ["/repo"],
      summary: "Readable:\n  - /repo\n  - /docs [non-recursive]\nWritable:\n  - /repo",
    },
    tools: ["write_file", "read_file"],
    ...overrides,
  };
}

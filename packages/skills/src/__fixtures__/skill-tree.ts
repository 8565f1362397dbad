import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

/** A temp pod: `<root>/pod` (cwd), `<root>/home` (HOME), `<root>/xdg` (XDG_CONFIG_HOME), `<root>/outside`. */
export interface SkillTree {
  root: string;
  cwd: string;
  home: string;
  xdg: string;
  outside: string;
  env: NodeJS.ProcessEnv;
  /** Writes a file (relative to `base`, default cwd), creating directories; returns its path. */
  write(relative: string, text: string | Uint8Array, base?: string): string;
  cleanup(): void;
}

/** `---\nname: <name>\ndescription: <description>\n<extra>---\n<body>`. */
export function skillText(name: string, description: string, options: { extra?: string; body?: string } = {}): string {
  return `---\nname: ${name}\ndescription: ${description}\n${options.extra ?? ""}---\n${options.body ?? `# ${name}\n\nDo the ${name} thing.\n`}`;
}

export function makeSkillTree(): SkillTree {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "insomnia-skills-")));
  const cwd = join(root, "pod");
  const home = join(root, "home");
  const xdg = join(root, "xdg");
  const outside = join(root, "outside");
  for (const dir of [cwd, home, xdg, outside]) mkdirSync(dir, { recursive: true });
  return {
    root,
    cwd,
    home,
    xdg,
    outside,
    env: { HOME: home, XDG_CONFIG_HOME: xdg },
    write(relative, text, base = cwd) {
      const path = join(base, relative);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      return path;
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";

/** Which of the four roots a skill came from, highest precedence first. */
export type SkillRootKind = "workspace" | "workspace-agents" | "user" | "user-agents";

/** One directory searched for `<name>/SKILL.md`. */
export interface SkillRoot {
  readonly kind: SkillRootKind;
  /** Absolute path as configured (not yet resolved through symlinks). */
  readonly dir: string;
  /** True for the roots inside the pod's directory: a repository controls them. */
  readonly workspace: boolean;
}

/** Options of {@link skillRoots}. */
export interface SkillRootsOptions {
  /** The pod's working directory (absolute). */
  cwd: string;
  /** For `XDG_CONFIG_HOME` and `HOME` (default `process.env`). */
  env?: NodeJS.ProcessEnv | undefined;
}

/** Highest first; the order of design.md ("Skill roots"). */
export const SKILL_ROOT_KINDS: readonly SkillRootKind[] = ["workspace", "workspace-agents", "user", "user-agents"];

/**
 * The skill roots of a pod in `cwd`, highest precedence first: `<cwd>/.insomnia/skills`,
 * `<cwd>/.agents/skills`, `$XDG_CONFIG_HOME/insomnia/skills` (`~/.config/insomnia/skills`
 * when it is unset or relative) and `~/.agents/skills`. A user root is left out when no
 * absolute home is known: a relative one would point into the repository.
 */
export function skillRoots(options: SkillRootsOptions): SkillRoot[] {
  const env = options.env ?? process.env;
  const roots: SkillRoot[] = [
    { kind: "workspace", dir: join(options.cwd, ".insomnia", "skills"), workspace: true },
    { kind: "workspace-agents", dir: join(options.cwd, ".agents", "skills"), workspace: true },
  ];
  const home = [env.HOME, homedir()].find((dir) => dir !== undefined && dir !== "" && isAbsolute(dir));
  const xdg = env.XDG_CONFIG_HOME;
  const config = xdg !== undefined && xdg !== "" && isAbsolute(xdg) ? xdg : home && join(home, ".config");
  if (config !== undefined) roots.push({ kind: "user", dir: join(config, "insomnia", "skills"), workspace: false });
  if (home !== undefined) roots.push({ kind: "user-agents", dir: join(home, ".agents", "skills"), workspace: false });
  return roots;
}

import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/**
 * `$user` root: $XDG_CONFIG_HOME/insomnia/prompts, or ~/.config/insomnia/prompts when
 * XDG_CONFIG_HOME is unset, empty or relative. Undefined when no absolute home is known:
 * a relative one would resolve inside the current directory, which a repository controls.
 */
export function userPromptsDir(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const xdg = env["XDG_CONFIG_HOME"];
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return join(xdg, "insomnia", "prompts");
  const home = [env["HOME"], homedir()].find((dir) => dir !== undefined && dir !== "" && isAbsolute(dir));
  return home === undefined ? undefined : join(home, ".config", "insomnia", "prompts");
}

/** `$workspace` root: <cwd>/.insomnia/prompts. */
export function workspacePromptsDir(cwd: string): string {
  return resolve(cwd, ".insomnia", "prompts");
}

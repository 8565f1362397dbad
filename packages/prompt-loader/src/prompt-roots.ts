import { homedir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";

/** `$user` root: $XDG_CONFIG_HOME/insomnia/prompts, or ~/.config/insomnia/prompts when XDG_CONFIG_HOME is unset, empty or relative. */
export function userPromptsDir(env: Readonly<Record<string, string | undefined>>): string {
  const xdg = env["XDG_CONFIG_HOME"];
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return join(xdg, "insomnia", "prompts");
  const home = env["HOME"];
  const base = home !== undefined && home !== "" && isAbsolute(home) ? home : homedir();
  return join(base, ".config", "insomnia", "prompts");
}

/** `$workspace` root: <cwd>/.insomnia/prompts. */
export function workspacePromptsDir(cwd: string): string {
  return resolve(cwd, ".insomnia", "prompts");
}

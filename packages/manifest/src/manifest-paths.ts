import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { PROJECT_MANIFEST_PATH } from "./defaults.ts";

/**
 * The user's insomnia config directory: $XDG_CONFIG_HOME/insomnia, else ~/.config/insomnia.
 * Undefined when no absolute home is known: a relative one would resolve inside the current
 * directory, which a repository controls.
 */
export function userConfigDir(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return join(xdg, "insomnia");
  const home = userHome(env);
  return home === undefined ? undefined : join(home, ".config", "insomnia");
}

/** The user's home directory ($HOME, else the account's), when it is absolute. */
export function userHome(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return [env.HOME, homedir()].find((dir) => dir !== undefined && dir !== "" && isAbsolute(dir));
}

/**
 * Absolute path of the user layer: $XDG_CONFIG_HOME/insomnia/pod.yaml, else
 * ~/.config/insomnia/pod.yaml. Undefined when no absolute home is known (then there is
 * no user layer).
 */
export function userManifestPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const dir = userConfigDir(env);
  return dir === undefined ? undefined : join(dir, "pod.yaml");
}

/** Absolute path of the default project layer: <cwd>/.insomnia/pod.yaml. */
export function projectManifestPath(cwd: string): string {
  return join(cwd, PROJECT_MANIFEST_PATH);
}

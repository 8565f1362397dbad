import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { PROJECT_MANIFEST_PATH, USER_MANIFEST_PATH } from "./defaults.ts";

/**
 * Absolute path of the user layer: $XDG_CONFIG_HOME/insomnia/pod.yaml, else
 * ~/.config/insomnia/pod.yaml. Undefined when no absolute home is known (then there is
 * no user layer): a relative one would resolve inside the current directory, which a
 * repository controls.
 */
export function userManifestPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return join(xdg, USER_MANIFEST_PATH);
  const home = [env.HOME, homedir()].find((dir) => dir !== undefined && dir !== "" && isAbsolute(dir));
  return home === undefined ? undefined : join(home, ".config", USER_MANIFEST_PATH);
}

/** Absolute path of the default project layer: <cwd>/.insomnia/pod.yaml. */
export function projectManifestPath(cwd: string): string {
  return join(cwd, PROJECT_MANIFEST_PATH);
}

import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { PROJECT_MANIFEST_PATH, USER_MANIFEST_PATH } from "./defaults.ts";

/** Absolute path of the user layer: $XDG_CONFIG_HOME/insomnia/pod.yaml, else ~/.config/insomnia/pod.yaml. */
export function userManifestPath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  if (xdg !== undefined && xdg !== "" && isAbsolute(xdg)) return join(xdg, USER_MANIFEST_PATH);
  const home = env.HOME !== undefined && env.HOME !== "" && isAbsolute(env.HOME) ? env.HOME : homedir();
  return join(home, ".config", USER_MANIFEST_PATH);
}

/** Absolute path of the default project layer: <cwd>/.insomnia/pod.yaml. */
export function projectManifestPath(cwd: string): string {
  return join(cwd, PROJECT_MANIFEST_PATH);
}

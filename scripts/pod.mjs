// `pnpm pod <args>`: runs the built `pod` bin of @insomnia/cli from the repo root.
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../packages/cli/dist/bin.cjs", import.meta.url));
if (!existsSync(bin)) {
  console.error("pod: packages/cli is not built yet; run `npx -y pnpm@10.34.9 build` first.");
  process.exit(2);
}
const result = spawnSync(process.execPath, [bin, ...process.argv.slice(2)], { stdio: "inherit" });
process.exit(result.status ?? 1);

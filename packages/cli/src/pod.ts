// The bundled CLI (dist/pod.cjs, run by dist/bin.cjs): `pod` on this process.
import { FdOutputStream } from "./fd-output.ts";
import { main } from "./main.ts";

void main(process.argv.slice(2), {
  stdout: new FdOutputStream(1, () => process.stdout),
  stderr: new FdOutputStream(2, () => process.stderr),
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});

// The bundled CLI (dist/pod.cjs, run by dist/bin.cjs): `pod` on this process.
import { main } from "./main.ts";

void main(process.argv.slice(2), {
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
  cwd: process.cwd(),
}).then((code) => {
  process.exitCode = code;
});

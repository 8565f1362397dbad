import { existsSync } from "node:fs";
import { BIN } from "./src/__fixtures__/sandbox.ts";

/** The process tests run the built bin (turbo builds it before this package's tests); say so when it is missing. */
export default function setup(): void {
  if (!existsSync(BIN))
    throw new Error(`${BIN} is missing: build the package first (pnpm turbo run build --filter=@insomnia/cli...)`);
}

import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_reads_its_own_first_line", async () => {
  const packageDir = join(import.meta.dirname, "..");
  const { source, logged } = await runReadmeExample(
    packageDir,
    [
      ['"@insomnia/safe-read"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      // The example reads from the working directory; here that is this package's directory.
      [
        '"README.md", { root: "."',
        `${JSON.stringify(join(packageDir, "README.md"))}, { root: ${JSON.stringify(packageDir)}`,
      ],
    ],
    tmpdir(),
  );
  expect(source).not.toContain("@insomnia/safe-read");
  expect(logged).toEqual([["# @insomnia/safe-read"]]);
});

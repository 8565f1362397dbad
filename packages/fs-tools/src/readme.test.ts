import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_lists_the_working_directory", async () => {
  const packageDir = join(import.meta.dirname, "..");
  const { source, logged } = await runReadmeExample(
    packageDir,
    [
      ['"@insomnia/fs-tools"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      // The example lists process.cwd(); here that is this package's directory.
      ["process.cwd()", JSON.stringify(packageDir)],
    ],
    join(packageDir, "node_modules"),
  );
  expect(source).not.toContain("@insomnia/fs-tools");
  expect(logged).toHaveLength(1);
  const listing = String(logged[0]?.[0]);
  expect(listing).toContain("README.md");
  expect(listing).toContain("src");
});

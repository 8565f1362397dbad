import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_lists_the_directory_and_cannot_read_etc_shadow", async () => {
  const packageDir = join(import.meta.dirname, "..");
  const { logged } = await runReadmeExample(
    packageDir,
    [
      ['"@insomnia/sandbox"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      ["process.cwd()", JSON.stringify(packageDir)],
    ],
    join(packageDir, "node_modules"),
  );
  expect(logged).toHaveLength(1);
  const result = String(logged[0]?.[0]);
  expect(result).toMatch(/^exit code: 1\nstdout:\n/);
  expect(result).toContain("README.md\n");
  expect(result).toContain("stderr:\ncat: /etc/shadow: Permission denied\n");
});

import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_refuses_an_alias", async () => {
  const packageDir = join(import.meta.dirname, "..");
  const { source, logged } = await runReadmeExample(
    packageDir,
    [['"@insomnia/safe-yaml"', sourceSpecifier(join(import.meta.dirname, "index.ts"))]],
    tmpdir(),
  );
  expect(source).not.toContain("@insomnia/safe-yaml");
  expect(logged).toEqual([[["YAML_ALIAS", "YAML_ALIAS"]]]);
});

import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";
import { sharedConnectionString } from "./__fixtures__/stores.ts";

test("readme_example_runs_and_prints_what_its_comment_says", async () => {
  const { block, source, logged } = await runReadmeExample(
    join(import.meta.dirname, ".."),
    [
      ['"@insomnia/segment-store-postgres"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      ["process.env.DATABASE_URL", JSON.stringify(sharedConnectionString())],
    ],
    // Under node_modules, so pg resolves from the example.
    join(import.meta.dirname, "..", "node_modules"),
  );
  expect(block.trim().split("\n")).toHaveLength(3);
  expect(source).not.toContain("@insomnia/segment-store-postgres");
  expect(logged).toEqual([[[]]]);
  expect(block).toContain("// [] (a new pod has no segment yet)");
});

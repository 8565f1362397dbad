import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_runs_and_prints_what_its_comment_says", async () => {
  const { block, source, logged } = await runReadmeExample(
    join(import.meta.dirname, ".."),
    [['"@insomnia/segment-store"', sourceSpecifier(join(import.meta.dirname, "index.ts"))]],
    tmpdir(),
  );
  expect(block.trim().split("\n")).toHaveLength(3);
  expect(source).not.toContain("@insomnia/segment-store");
  const lines = logged.map((args) => args.join(" "));
  expect(lines).toEqual(["seg-0000000001"]);
});

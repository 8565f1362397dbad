import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_runs_and_prints_what_its_comments_say", async () => {
  const { source, logged } = await runReadmeExample(
    join(import.meta.dirname, ".."),
    [
      ['"@insomnia/worker/testing"', sourceSpecifier(join(import.meta.dirname, "testing.ts"))],
      ['"@insomnia/worker"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
    ],
    tmpdir(),
  );
  expect(source).not.toContain("@insomnia/worker");
  const lines = logged.map((args) => args.join(" "));
  expect(lines).toEqual([
    "log: user",
    "log: assistant",
    "log: tool",
    "log: assistant",
    "The tool said hi. 2",
    "log: user",
    "log: assistant",
    "Goodbye. 6",
    "true",
  ]);
});

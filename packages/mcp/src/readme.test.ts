import { join } from "node:path";
import { expect, inject, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";

test("readme_example_lists_and_calls_a_server_tool", async () => {
  const packageDir = join(import.meta.dirname, "..");
  const { source, logged } = await runReadmeExample(
    packageDir,
    [
      ['"@insomnia/mcp"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      ['command: "node"', `command: ${JSON.stringify(process.execPath)}`],
      // The stdio fixture server, bundled with the SDK by the global setup.
      ['["server.mjs"]', JSON.stringify([inject("mcpStdioFixture")])],
    ],
    join(packageDir, "node_modules"),
  );
  expect(source).not.toContain("@insomnia/mcp");
  expect(logged).toHaveLength(1);
  const [names, echoed] = logged[0] as [string[], string];
  expect(names).toContain("mcp__demo__echo");
  expect(names).toEqual([...names].sort());
  expect(echoed).toBe("echo: hi");
});

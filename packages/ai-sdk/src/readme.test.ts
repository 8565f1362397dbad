import { join } from "node:path";
import { createAnthropic } from "./__fixtures__/models.ts";
import { expect, test } from "vitest";
import { runReadmeExample, sourceSpecifier } from "../../../test/support/readme-example.ts";
import { startFakeProvider } from "./fake-provider.ts";

test("readme_example_runs_against_a_local_anthropic_server", async () => {
  const fake = await startFakeProvider(() => ({ text: "Hello." }));
  try {
    // The example's `anthropic` provider, pointed at the local server instead of the internet.
    (globalThis as unknown as { readmeAnthropic: unknown }).readmeAnthropic = createAnthropic({
      baseURL: fake.baseURL,
      apiKey: "readme",
    });
    const { source, logged } = await runReadmeExample(
      join(import.meta.dirname, ".."),
      [
        ['"@ai-sdk/anthropic"', sourceSpecifier(join(import.meta.dirname, "__fixtures__", "readme-anthropic.ts"))],
        ['"@insomnia/ai-sdk"', sourceSpecifier(join(import.meta.dirname, "index.ts"))],
      ],
      join(import.meta.dirname, "..", "node_modules"),
    );
    expect(source).not.toContain("@insomnia/ai-sdk");
    expect(logged).toHaveLength(1);
    expect(logged[0]?.[0]).toMatchObject({ content: "Hello." });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]?.json).toMatchObject({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user" }],
    });
    expect(JSON.stringify(fake.requests[0]?.json)).toContain("Be brief.");
  } finally {
    await fake.close();
  }
});

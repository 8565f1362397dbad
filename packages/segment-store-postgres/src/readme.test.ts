import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, test } from "vitest";
import { sharedConnectionString } from "./__fixtures__/stores.ts";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

test("readme_example_runs_and_prints_what_its_comment_says", async () => {
  const readme = await readFile(join(import.meta.dirname, "..", "README.md"), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  expect(block.trim().split("\n")).toHaveLength(3);
  const source = block
    .replace(
      '"@insomnia/segment-store-postgres"',
      JSON.stringify(pathToFileURL(join(import.meta.dirname, "index.ts")).href),
    )
    .replace("process.env.DATABASE_URL", JSON.stringify(sharedConnectionString()))
    .replaceAll("console.log(", "(globalThis as unknown as { readmeLog: (...a: unknown[]) => void }).readmeLog(");
  expect(source).not.toContain("@insomnia/segment-store-postgres");
  const dir = await mkdtemp(join(import.meta.dirname, "..", "node_modules", ".readme-"));
  dirs.push(dir);
  const file = join(dir, "example.ts");
  await writeFile(file, source);
  const logged: unknown[][] = [];
  (globalThis as unknown as { readmeLog: (...a: unknown[]) => void }).readmeLog = (...args) => logged.push(args);
  await import(/* @vite-ignore */ pathToFileURL(file).href);
  expect(logged).toEqual([[[]]]);
  expect(block).toContain("// [] (a new pod has no segment yet)");
});

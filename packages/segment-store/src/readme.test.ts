import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, expect, test } from "vitest";

const dirs: string[] = [];
afterAll(async () => {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
});

test("readme_example_runs_and_prints_what_its_comment_says", async () => {
  const readme = await readFile(join(import.meta.dirname, "..", "README.md"), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  expect(block.trim().split("\n")).toHaveLength(3);
  const source = block
    .replace('"@insomnia/segment-store"', JSON.stringify(pathToFileURL(join(import.meta.dirname, "index.ts")).href))
    .replaceAll("console.log(", "(globalThis as unknown as { readmeLog: (...a: unknown[]) => void }).readmeLog(");
  expect(source).not.toContain("@insomnia/segment-store");
  const dir = await mkdtemp(join(tmpdir(), "insomnia-segment-store-readme-"));
  dirs.push(dir);
  const file = join(dir, "example.ts");
  await writeFile(file, source);
  const lines: string[] = [];
  (globalThis as unknown as { readmeLog: (...a: unknown[]) => void }).readmeLog = (...args) =>
    lines.push(args.join(" "));
  await import(/* @vite-ignore */ pathToFileURL(file).href);
  expect(lines).toEqual(["seg-0000000001"]);
});

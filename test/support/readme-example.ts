import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

type ReadmeLog = (...args: unknown[]) => void;

/** What running a README's example gave. */
export interface ReadmeExampleRun {
  /** The README's first ```ts block, as written. */
  readonly block: string;
  /** The block as it ran: package names pointed at the sources, console.log recorded. */
  readonly source: string;
  /** The arguments of every console.log call, in order. */
  readonly logged: unknown[][];
}

/**
 * Runs the first ```ts block of `<packageDir>/README.md` as a module of its own, so a README's
 * runnable example is a test. `imports` maps each package name the example imports (with its
 * quotes, e.g. `'"@insomnia/worker"'`) or any other text to its replacement, in order; the file
 * is written to a temp directory under `tempParent` (removed afterwards).
 */
export async function runReadmeExample(
  packageDir: string,
  imports: readonly (readonly [string, string])[],
  tempParent: string,
): Promise<ReadmeExampleRun> {
  const readme = await readFile(join(packageDir, "README.md"), "utf8");
  const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  let source = block;
  for (const [from, to] of imports) source = source.replace(from, to);
  source = source.replaceAll(
    "console.log(",
    "(globalThis as unknown as { readmeLog: (...a: unknown[]) => void }).readmeLog(",
  );
  const dir = await mkdtemp(join(tempParent, "insomnia-readme-"));
  const logged: unknown[][] = [];
  (globalThis as unknown as { readmeLog: ReadmeLog }).readmeLog = (...args) => logged.push(args);
  try {
    const file = join(dir, "example.ts");
    await writeFile(file, source);
    await import(/* @vite-ignore */ pathToFileURL(file).href);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { block, source, logged };
}

/** The file: URL (as a quoted module specifier) of a source file, for {@link runReadmeExample}. */
export function sourceSpecifier(file: string): string {
  return JSON.stringify(pathToFileURL(file).href);
}

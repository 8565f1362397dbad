import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, test } from "vitest";
import { BIN, useSandbox } from "./__fixtures__/sandbox.ts";

// Issue 27, item 3: a repository controls its prompt files, and a tree of them within every
// per-file cap took `pod check` 92.7 s and 3.5 GB to refuse. A safety test: the figures go
// to the benchmark (bench/template-caps.mjs); the memory bound here is loose on purpose.

const { box } = useSandbox();

/** Heap the child may use: the old parse needed about 3.5 GB here and dies at this cap. */
const MAX_OLD_SPACE_MB = 512;

/** Writes the child's peak RSS (kB) to the file named in the environment when it exits. */
const PEAK_RSS_PRELOAD = `process.once("exit", () => require("node:fs").writeFileSync(process.env.POD_TEST_PEAK_RSS_FILE, String(process.resourceUsage().maxRSS)));`;

describe("pod check on a fan-out include tree", () => {
  test("a_fan_out_tree_of_160_includes_of_180_KB_is_refused_within_a_bounded_heap", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    await box.write(
      ".insomnia/prompts/main.md",
      `${Array.from({ length: 160 }, (_, i) => `{{> f${i + 1}}}`).join("\n")}\n`,
    );
    // 180,000 bytes, 10,000 statements: exactly at the per-file cap.
    const include = "{{#if cwd}}{{/if}}".repeat(10_000);
    for (let i = 1; i <= 160; i++) await box.write(`.insomnia/prompts/f${i}.md`, include);
    const preload = await box.write("peak-rss.cjs", PEAK_RSS_PRELOAD, box.home);
    const rssFile = join(box.home, "peak-rss");

    const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      execFile(
        process.execPath,
        [`--max-old-space-size=${MAX_OLD_SPACE_MB}`, "--require", preload, BIN, "check"],
        {
          cwd: box.ws,
          env: { PATH: process.env.PATH ?? "", ...box.env, POD_TEST_PEAK_RSS_FILE: rssFile },
          encoding: "utf8",
          timeout: 120_000,
        },
        (error, stdout, stderr) => {
          const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
          resolve({ code, stdout, stderr });
        },
      );
    });

    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/main\.md:10:1: EXPANSION_TOO_LARGE: /);
    expect(run.code).toBe(1);
    const peakMiB = Number(await readFile(rssFile, "utf8")) / 1024;
    // Under 200 MiB on a quiet machine.
    expect(peakMiB).toBeLessThan(MAX_OLD_SPACE_MB);
  }, 150_000);
});

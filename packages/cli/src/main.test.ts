import { describe, expect, test } from "vitest";
import { EXIT, main } from "./main.ts";
import type { OutputStream } from "./output.ts";
import { collector } from "./__fixtures__/sandbox.ts";

describe("main in process", () => {
  test("version_prints_the_package_version", async () => {
    const stdout = collector();
    const stderr = collector();
    const code = await main(["--version"], { stdout, stderr, env: {}, cwd: process.cwd() });
    const { version } = (await import("../package.json", { with: { type: "json" } })).default;
    expect([code, stdout.text, stderr.text]).toEqual([EXIT.ok, `${version}\n`, ""]);
  });

  test("usage_error_exits_2_without_a_stack", async () => {
    const stdout = collector();
    const stderr = collector();
    const code = await main(["prompt", "--nope"], { stdout, stderr, env: {}, cwd: process.cwd() });
    expect(code).toBe(EXIT.usage);
    expect(stdout.text).toBe("");
    expect(stderr.text).toMatch(/^pod: USAGE: Unknown option '--nope'.*\(see 'pod prompt --help'\)\n$/);
  });

  // A stdout that throws is a real way for pod's own code to fail unexpectedly, without a test hook in production code.
  test("internal_error_prints_the_stack_and_asks_for_a_report", async () => {
    const stderr = collector();
    const broken: OutputStream = {
      write() {
        throw new TypeError("stdout exploded");
      },
    };
    const code = await main(["--help"], { stdout: broken, stderr, env: {}, cwd: process.cwd() });
    expect(code).toBe(EXIT.internal);
    expect(stderr.text).toMatch(/^TypeError: stdout exploded\n\s+at /);
    expect(stderr.text.endsWith("This is a bug in pod; please report it with the output above.\n")).toBe(true);
  });
});

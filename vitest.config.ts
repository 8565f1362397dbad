import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

// No test leaves loopback, so a machine-wide CA bundle is dead weight: Node parses the whole
// NODE_EXTRA_CA_CERTS file as it starts, in every worker and every process a test starts
// (bench/RESULTS.md, issue 28). The workers start after this file is read and inherit it.
delete process.env.NODE_EXTRA_CA_CERTS;

/**
 * Every test of the repository in one run: each package and example is a project with its own
 * config (timeouts, global setup), and the repository checks are one more. One process shares
 * one pool of workers across all of them, sized to the machine's cores.
 */
export default defineConfig({
  test: {
    // One worker more than cores: the CLI and store tests spend much of their time waiting on
    // the processes they start, and the extra worker runs tests meanwhile (bench/RESULTS.md).
    maxWorkers: availableParallelism() + 1,
    projects: [
      "packages/*/vitest.config.ts",
      "examples/*/vitest.config.ts",
      {
        test: {
          name: "repo",
          include: ["test/**/*.test.ts"],
          exclude: ["test/e2e/**"],
          testTimeout: 120_000,
        },
      },
    ],
  },
});

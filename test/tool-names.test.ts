import { describe, expect, test } from "vitest";
import { FS_TOOL_NAMES } from "../packages/fs-tools/src/tool-names.ts";
import { DEFAULT_WORKER_TOOLS, WORKER_TOOL_NAMES } from "../packages/manifest/src/defaults.ts";
import { RUN_COMMAND_TOOL_NAME } from "../packages/sandbox/src/run-command-tool.ts";

// The manifest validates worker.tools without importing @insomnia/fs-tools or @insomnia/sandbox
// (design.md's dependency table), so the lists are kept equal here.
describe("tool names", () => {
  test("manifest_worker_tool_names_are_the_fs_tool_names_and_run_command", () => {
    expect([...WORKER_TOOL_NAMES]).toEqual([...FS_TOOL_NAMES, RUN_COMMAND_TOOL_NAME].sort());
    expect([...DEFAULT_WORKER_TOOLS]).toEqual([...FS_TOOL_NAMES]);
  });
});

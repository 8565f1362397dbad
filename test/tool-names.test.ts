import { describe, expect, test } from "vitest";
import { FS_TOOL_NAMES } from "../packages/fs-tools/src/tool-names.ts";
import { WORKER_TOOL_NAMES } from "../packages/manifest/src/defaults.ts";

// The manifest validates worker.tools without importing @insomnia/fs-tools (design.md's
// dependency table), so the two lists are kept equal here.
describe("tool names", () => {
  test("manifest_worker_tool_names_are_the_fs_tool_names", () => {
    expect([...WORKER_TOOL_NAMES]).toEqual([...FS_TOOL_NAMES]);
  });
});

import { Scope } from "@insomnia/scope";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, makeBox, outcome, serverFor, toolsFor } from "./__fixtures__/tree.ts";
import { fsTools, pickFsTools } from "./fs-tools.ts";
import { FsToolsError } from "./fs-tools-error.ts";
import { FS_TOOL_NAMES, isFsToolName } from "./tool-names.ts";

let box: Box;
beforeEach(() => {
  box = makeBox();
});
afterEach(() => box.remove());

const writeAll = { allow: [{ target: ".", permission: "write" as const }] };

function thrown(run: () => unknown): FsToolsError {
  try {
    run();
  } catch (error) {
    if (FsToolsError.is(error)) return error;
    throw error;
  }
  throw new Error("expected an FsToolsError");
}

describe("fsTools", () => {
  test("fs_tools_default_set_is_all_four_sorted_by_name", () => {
    const tools = fsTools(Scope.fromConfig(writeAll, box.root));
    expect(tools.map((t) => t.name)).toEqual(["edit_file", "list_dir", "read_file", "write_file"]);
    expect(FS_TOOL_NAMES).toEqual(["edit_file", "list_dir", "read_file", "write_file"]);
    for (const tool of tools) {
      expect(tool.inputSchema).toMatchObject({ type: "object", additionalProperties: false });
      expect(tool.description.length).toBeGreaterThan(50);
    }
  });

  test("fs_tools_picks_by_name_and_empty_list_is_none", () => {
    const scope = Scope.fromConfig(writeAll, box.root);
    expect(fsTools(scope, { tools: ["read_file", "list_dir", "read_file"] }).map((t) => t.name)).toEqual([
      "list_dir",
      "read_file",
    ]);
    expect(fsTools(scope, { tools: [] })).toEqual([]);
    expect(pickFsTools(["write_file", "edit_file"])).toEqual(["edit_file", "write_file"]);
    expect(isFsToolName("read_file")).toBe(true);
    expect(isFsToolName("bash")).toBe(false);
  });

  test("fs_tools_unknown_name_suggests_the_closest", () => {
    const error = thrown(() => pickFsTools(["read_fle"]));
    expect(error.code).toBe("UNKNOWN_TOOL");
    expect(error.message).toBe(
      'unknown file tool "read_fle" (did you mean "read_file"?); the file tools are edit_file, list_dir, read_file, write_file',
    );
    expect(thrown(() => pickFsTools([42 as unknown as string])).code).toBe("UNKNOWN_TOOL");
  });

  test("fs_tools_bad_options_are_invalid_options", () => {
    const scope = Scope.fromConfig(writeAll, box.root);
    expect(thrown(() => fsTools(scope, { maxEntries: 0 })).message).toBe(
      "fsTools option maxEntries must be a whole number of 1 or more, got 0",
    );
    expect(thrown(() => fsTools({} as Scope)).code).toBe("INVALID_OPTIONS");
    expect(thrown(() => fsTools(scope, { tools: "read_file" as unknown as string[] })).code).toBe("INVALID_OPTIONS");
  });

  test("a_refusal_reaches_the_model_as_an_is_error_tool_message", async () => {
    box.write("a.txt", "hello\n");
    const server = serverFor(Scope.fromConfig({ allow: [{ target: ".", permission: "read" }] }, box.root));
    expect(await server.call({ id: "1", name: "read_file", input: { path: "a.txt" } })).toEqual({
      role: "tool",
      toolCallId: "1",
      name: "read_file",
      content: "hello\n",
    });
    const refused = await server.call({ id: "2", name: "write_file", input: { path: "a.txt", content: "x" } });
    expect(refused.isError).toBe(true);
    expect(refused.content).toContain(`write_file refused "a.txt" (${box.root}/a.txt): it is read-only`);
  });
});

describe("tool input", () => {
  const cases: [string, unknown, string][] = [
    [
      "read_file",
      null,
      'read_file: the input must be an object with "path", "offset", "limit", got null; nothing was accessed',
    ],
    [
      "read_file",
      ["a"],
      'read_file: the input must be an object with "path", "offset", "limit", got an array; nothing was accessed',
    ],
    [
      "read_file",
      {},
      'read_file: "path" is missing (a non-empty path, absolute or relative to the working directory); nothing was accessed',
    ],
    [
      "read_file",
      { path: 7 },
      'read_file: "path" must be a non-empty path, absolute or relative to the working directory, got 7; nothing was accessed',
    ],
    [
      "read_file",
      { path: "" },
      'read_file: "path" must be a non-empty path, absolute or relative to the working directory, got an empty string; nothing was accessed',
    ],
    [
      "read_file",
      { path: "a\0b" },
      'read_file: "path" must be a non-empty path, absolute or relative to the working directory, got a path with a NUL byte; nothing was accessed',
    ],
    [
      "read_file",
      { path: "a", offset: 0 },
      'read_file: "offset" must be a whole number of 1 or more, got 0; nothing was accessed',
    ],
    [
      "read_file",
      { path: "a", limit: 1.5 },
      'read_file: "limit" must be a whole number of 1 or more, got 1.5; nothing was accessed',
    ],
    [
      "read_file",
      { path: "a", limit: "10" },
      'read_file: "limit" must be a whole number of 1 or more, got the string "10"; nothing was accessed',
    ],
    [
      "read_file",
      { file_path: "a" },
      'read_file: unknown field "file_path" (did you mean "path"?); the fields are path, offset, limit; nothing was accessed',
    ],
    ["write_file", { path: "a" }, 'write_file: "content" is missing (a string); nothing was accessed'],
    [
      "write_file",
      { path: "a", content: { text: "x" } },
      'write_file: "content" must be a string, got an object; nothing was accessed',
    ],
    [
      "edit_file",
      { path: "a", old_string: "", new_string: "x" },
      'edit_file: "old_string" must be a non-empty string, got an empty string; nothing was accessed',
    ],
    [
      "edit_file",
      { path: "a", old_str: "x", new_string: "y" },
      'edit_file: unknown field "old_str" (did you mean "old_string"?); the fields are path, old_string, new_string; nothing was accessed',
    ],
    [
      "list_dir",
      { path: "x".repeat(5000) },
      'list_dir: "path" must be a non-empty path, absolute or relative to the working directory, got a path of 5000 characters (the limit is 4096); nothing was accessed',
    ],
  ];
  test.each(cases)("wrong_input_to_%s_is_an_invalid_input_refusal_%#", async (name, input, message) => {
    const tools = toolsFor(writeAll, box.root);
    expect(await outcome(tools[name]!, input)).toEqual({ ok: false, code: "INVALID_INPUT", message });
  });
});

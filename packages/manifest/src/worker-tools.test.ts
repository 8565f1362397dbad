import { describe, expect, test } from "vitest";
import { manifestErrorOf, where } from "./__fixtures__/manifest-errors.ts";
import { DEFAULT_RUN_COMMAND_TIMEOUT_MS, DEFAULT_WORKER_TOOLS, WORKER_TOOL_NAMES } from "./defaults.ts";
import { parseManifestLayer, validateManifestLayer } from "./parse-manifest-layer.ts";
import { parseOverlay } from "./parse-overlay.ts";
import { merge } from "./merge.ts";
import { resolveManifest } from "./resolve-manifest.ts";

const FILE = ".insomnia/pod.yaml";

describe("worker.tools", () => {
  test("worker_tools_absent_is_every_file_tool", () => {
    expect(resolveManifest({}, { cwd: "/p" }).worker.tools).toEqual([
      "edit_file",
      "list_dir",
      "read_file",
      "write_file",
    ]);
    expect(DEFAULT_WORKER_TOOLS).toEqual(["edit_file", "list_dir", "read_file", "write_file"]);
    expect(WORKER_TOOL_NAMES).toEqual(["edit_file", "list_dir", "read_file", "run_command", "write_file"]);
  });

  test("worker_tools_lists_names_sorted_without_duplicates_and_empty_is_none", () => {
    const layer = parseManifestLayer("worker:\n  tools: [write_file, read_file, read_file]\n", FILE);
    expect(resolveManifest(layer, { cwd: "/p" }).worker.tools).toEqual(["read_file", "write_file"]);
    expect(resolveManifest(parseManifestLayer("worker:\n  tools: []\n", FILE), { cwd: "/p" }).worker.tools).toEqual([]);
  });

  test("worker_tools_upper_layer_replaces_the_lower_list", () => {
    const lower = parseManifestLayer("worker:\n  tools: [read_file, list_dir]\n", FILE);
    const overlay = parseOverlay("worker.tools = []");
    expect(resolveManifest(merge(lower, overlay), { cwd: "/p" }).worker.tools).toEqual([]);
  });

  test("worker_tools_misspelt_name_is_positioned_with_a_suggestion", () => {
    const error = manifestErrorOf(() =>
      parseManifestLayer("worker:\n  tools:\n    - read_file\n    - edit_flie\n", FILE),
    );
    expect(where(error)).toEqual({ code: "INVALID_VALUE", file: FILE, line: 4, column: 7 });
    expect(error.message).toBe(
      `${FILE}:4:7: worker.tools[1] is "edit_flie", not a tool (did you mean "edit_file"?); the tools are edit_file, list_dir, read_file, run_command, write_file (write [] for none)`,
    );
  });

  test("worker_tools_unknown_name_without_a_close_match_lists_the_tools", () => {
    const result = validateManifestLayer("worker:\n  tools: [bash, 7]\n", FILE);
    expect(result.ok ? [] : result.issues.map((e) => e.message)).toEqual([
      `${FILE}:2:11: worker.tools[0] is "bash", not a tool; the tools are edit_file, list_dir, read_file, run_command, write_file (write [] for none)`,
      `${FILE}:2:17: worker.tools[1] must be one of the tool names edit_file, list_dir, read_file, run_command, write_file, got 7`,
    ]);
  });

  test("worker_tools_not_a_list_is_an_invalid_value", () => {
    const error = manifestErrorOf(() => parseManifestLayer("worker:\n  tools: read_file\n", FILE));
    expect(error.message).toBe(
      `${FILE}:2:10: worker.tools must be a list of tool names (write [] for none), got "read_file"`,
    );
  });
});

describe("worker.run_command", () => {
  test("run_command_is_named_in_worker_tools_and_its_settings_default_to_120_s_without_network", () => {
    const layer = parseManifestLayer("worker:\n  tools: [read_file, run_command]\n", FILE);
    const worker = resolveManifest(layer, { cwd: "/p" }).worker;
    expect(worker.tools).toEqual(["read_file", "run_command"]);
    expect(worker.run_command).toEqual({ timeout_ms: DEFAULT_RUN_COMMAND_TIMEOUT_MS, network: false });
    expect(DEFAULT_RUN_COMMAND_TIMEOUT_MS).toBe(120_000);
  });

  test("run_command_timeout_and_network_are_read_from_a_layer_and_an_overlay", () => {
    const layer = parseManifestLayer("worker:\n  run_command:\n    timeout_ms: 600000\n    network: true\n", FILE);
    expect(resolveManifest(layer, { cwd: "/p" }).worker.run_command).toEqual({ timeout_ms: 600_000, network: true });
    const overlay = parseOverlay("worker.run_command.timeout_ms = 5000");
    expect(resolveManifest(merge(layer, overlay), { cwd: "/p" }).worker.run_command).toEqual({
      timeout_ms: 5000,
      network: true,
    });
  });

  test("run_command_bad_values_and_unknown_keys_are_positioned", () => {
    const result = validateManifestLayer(
      "worker:\n  run_command:\n    timeout_ms: 0\n    network: yes please\n    sandbox: false\n",
      FILE,
    );
    expect(result.ok ? [] : result.issues.map((e) => e.message)).toEqual([
      `${FILE}:3:17: worker.run_command.timeout_ms must be a positive whole number of milliseconds, got 0`,
      `${FILE}:4:14: worker.run_command.network must be true or false, got "yes please"`,
      expect.stringMatching(new RegExp(`^${FILE}:5:5: unknown key "sandbox" in worker.run_command`)),
    ]);
  });
});

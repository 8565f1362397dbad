import { describe, expect, test } from "vitest";
import { manifestErrorOf, where } from "./__fixtures__/manifest-errors.ts";
import { parseManifestLayer } from "./parse-manifest-layer.ts";
import { parseOverlay } from "./parse-overlay.ts";
import { resolveManifest } from "./resolve-manifest.ts";

const FILE = ".insomnia/pod.yaml";
const errorOf = (text: string) => manifestErrorOf(() => parseManifestLayer(text, FILE));
const resolved = (text: string) => resolveManifest(parseManifestLayer(text, FILE), { cwd: "/work/p" });

describe("compaction keys", () => {
  test("compact_at_is_used_exactly_as_written_at_both_ends_of_its_range", () => {
    expect(resolved("worker:\n  compact_at: 0.5\n").worker.compact_at).toBe(0.5);
    expect(resolved("worker:\n  compact_at: 0.95\n").worker.compact_at).toBe(0.95);
    expect(resolved("worker:\n  compact_at: 0.73\n").worker.compact_at).toBe(0.73);
    expect(resolved("{}\n").worker).toMatchObject({ compact_at: 0.8, compact_instruction: "$insomnia/compact" });
  });

  test.each([
    ["0.49", "0.49"],
    ["0.951", "0.951"],
    ["1", "1"],
    ["0", "0"],
    ["-0.8", "-0.8"],
    ["80", "80"],
    ['"0.8"', '"0.8"'],
    [".nan", "NaN"],
    ["true", "true"],
  ])("compact_at_%s_is_refused_at_its_position_never_clamped", (value, shown) => {
    const error = errorOf(`worker:\n  compact_at: ${value}\n`);
    expect(where(error)).toEqual({ code: "INVALID_VALUE", file: FILE, line: 2, column: 15 });
    expect(error.message).toContain("worker.compact_at must be a fraction of the context window from 0.5 to 0.95");
    expect(error.message).toContain("never clamped");
    expect(error.message).toContain(shown);
  });

  test.each([["0"], ["-1"], ["1.5"], ['"200000"'], ["[]"]])("context_window_%s_is_refused_at_its_position", (value) => {
    const error = errorOf(`provider:\n  kind: anthropic\n  model: m\n  context_window: ${value}\n`);
    expect(where(error)).toEqual({ code: "INVALID_VALUE", file: FILE, line: 4, column: 19 });
    expect(error.message).toContain("provider.context_window must be a positive whole number of tokens");
  });

  test.each([['""'], ["7"], ["[]"]])("compact_instruction_%s_is_refused_at_its_position", (value) => {
    const error = errorOf(`worker:\n  compact_instruction: ${value}\n`);
    expect(where(error)).toEqual({ code: "INVALID_VALUE", file: FILE, line: 2, column: 24 });
    expect(error.message).toContain("worker.compact_instruction must be a non-empty prompt reference");
  });

  test("context_window_is_kept_and_an_overlay_sets_compact_at", () => {
    const manifest = resolved("provider:\n  kind: anthropic\n  model: m\n  context_window: 50000\n");
    expect(manifest.provider?.context_window).toBe(50_000);
    const overlay = parseOverlay("worker.compact_at = 0.6");
    expect(resolveManifest(overlay, { cwd: "/work/p" }).worker.compact_at).toBe(0.6);
    expect(() => parseOverlay("worker.compact_at = 0.99")).toThrow(/worker\.compact_at must be a fraction/);
  });
});

import { describe, expect, test } from "vitest";
import { merge } from "./merge.ts";

describe("merge", () => {
  test("upper_layer_scalars_win_key_by_key", () => {
    expect(
      merge(
        { worker: { max_turns: 5, max_tokens: 100 }, pod: { name: "a" } },
        { worker: { max_turns: 7 } },
        { pod: { pwd: "/x" } },
      ),
    ).toEqual({ worker: { max_turns: 7, max_tokens: 100 }, pod: { name: "a", pwd: "/x" } });
  });

  test("scope_rules_accumulate_lowest_first", () => {
    const merged = merge(
      { scope: { allow: [{ target: "/a", permission: "read" }], deny: [{ target: "/a/s", permission: "read" }] } },
      { scope: { allow: [{ target: "/b", permission: "write" }] } },
      { scope: { deny: [{ target: "/b/s", permission: "write", recursive: false }] } },
    );
    expect(merged.scope).toEqual({
      allow: [
        { target: "/a", permission: "read" },
        { target: "/b", permission: "write" },
      ],
      deny: [
        { target: "/a/s", permission: "read" },
        { target: "/b/s", permission: "write", recursive: false },
      ],
    });
  });

  test("provider_fields_merge_across_layers", () => {
    expect(merge({ provider: { kind: "openai", model: "a" } }, { provider: { model: "b" } })).toEqual({
      provider: { kind: "openai", model: "b" },
    });
  });

  test("inputs_are_not_mutated", () => {
    const lower = { scope: { allow: [{ target: "/a", permission: "read" as const }] }, worker: { max_turns: 1 } };
    const upper = { scope: { allow: [{ target: "/b", permission: "read" as const }] }, worker: { max_turns: 2 } };
    merge(lower, upper);
    expect(lower).toEqual({ scope: { allow: [{ target: "/a", permission: "read" }] }, worker: { max_turns: 1 } });
  });

  test("no_layers_is_an_empty_layer", () => {
    expect(merge()).toEqual({});
  });
});

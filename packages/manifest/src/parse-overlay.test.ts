import { describe, expect, test } from "vitest";
import { manifestErrorOf, where } from "./__fixtures__/manifest-errors.ts";
import { ManifestError } from "./manifest-error.ts";
import { parseOverlay, validateOverlay } from "./parse-overlay.ts";

const errorOf = (expression: string, file?: string): ManifestError =>
  manifestErrorOf(() => parseOverlay(expression, file));

describe("parseOverlay", () => {
  test("quoted_instruction_reference_sets_worker_instruction", () => {
    expect(parseOverlay('worker.instruction = "$user/foo"')).toEqual({ worker: { instruction: "$user/foo" } });
  });

  test("plain_values_are_yaml_scalars", () => {
    expect(parseOverlay("worker.max_turns = 10")).toEqual({ worker: { max_turns: 10 } });
    expect(parseOverlay("worker.temperature=0.5")).toEqual({ worker: { temperature: 0.5 } });
    expect(parseOverlay("worker.instruction = $user/foo")).toEqual({ worker: { instruction: "$user/foo" } });
  });

  test("flow_sequence_of_rules_sets_scope_allow", () => {
    expect(parseOverlay("scope.allow = [{target: /tmp, permission: read}]")).toEqual({
      scope: { allow: [{ target: "/tmp", permission: "read" }] },
    });
  });

  test("section_key_takes_a_flow_mapping", () => {
    expect(parseOverlay("provider = {kind: openai, model: gpt-x}")).toEqual({
      provider: { kind: "openai", model: "gpt-x" },
    });
  });

  test("value_may_contain_equals_signs", () => {
    expect(parseOverlay("provider.base_url = http://localhost:8080/v1?a=b")).toEqual({
      provider: { base_url: "http://localhost:8080/v1?a=b" },
    });
  });

  test("missing_equals_is_invalid_overlay_at_the_end", () => {
    expect(where(errorOf("worker.max_turns 10"))).toEqual({
      code: "INVALID_OVERLAY",
      file: "--overlay",
      line: 1,
      column: 20,
    });
  });

  test("empty_key_is_invalid_overlay", () => {
    expect(where(errorOf(" = 3"))).toEqual({ code: "INVALID_OVERLAY", file: "--overlay", line: 1, column: 2 });
  });

  test("empty_key_segment_is_invalid_overlay_at_the_segment", () => {
    expect(where(errorOf("worker..max_turns = 3"))).toEqual({
      code: "INVALID_OVERLAY",
      file: "--overlay",
      line: 1,
      column: 8,
    });
  });

  test("missing_value_is_invalid_overlay", () => {
    expect(where(errorOf("worker.max_turns ="))).toEqual({
      code: "INVALID_OVERLAY",
      file: "--overlay",
      line: 1,
      column: 19,
    });
  });

  test("unknown_key_points_at_its_segment_with_a_suggestion", () => {
    const error = errorOf('worker.instructions = "$user/foo"');
    expect(where(error)).toEqual({ code: "UNKNOWN_KEY", file: "--overlay", line: 1, column: 8 });
    expect(error.suggestion).toBe("instruction");
    expect(error.message).toBe('--overlay:1:8: unknown key "instructions" in worker (did you mean "instruction"?)');
  });

  test("unknown_key_inside_the_value_points_into_the_value", () => {
    const error = errorOf("worker = {max_turn: 3}");
    expect([error.code, error.column, error.suggestion, error.key]).toEqual([
      "UNKNOWN_KEY",
      11,
      "max_turns",
      "worker.max_turn",
    ]);
  });

  test("key_below_a_value_is_unknown", () => {
    expect(where(errorOf("worker.max_turns.x = 1"))).toEqual({
      code: "UNKNOWN_KEY",
      file: "--overlay",
      line: 1,
      column: 18,
    });
  });

  test("wrong_type_is_invalid_overlay_at_the_value_with_cause", () => {
    const error = errorOf("worker.max_turns = -1");
    expect(where(error)).toEqual({ code: "INVALID_OVERLAY", file: "--overlay", line: 1, column: 20 });
    expect(error.key).toBe("worker.max_turns");
    expect(ManifestError.is(error.cause) && error.cause.code).toBe("INVALID_VALUE");
  });

  test("wrong_type_inside_a_rule_points_at_the_field", () => {
    const error = errorOf("scope.deny = [{target: /tmp, permission: all}]");
    expect([error.code, error.column, error.key]).toEqual(["INVALID_OVERLAY", 42, "scope.deny[0].permission"]);
  });

  test("unsafe_yaml_in_the_value_is_invalid_overlay", () => {
    for (const [expression, inner, column] of [
      ["worker.max_turns = &a 1", "YAML_ALIAS", 20],
      ["worker.max_turns = !!int 1", "YAML_TAG", 20],
      ["worker = {max_turns: 1, max_turns: 2}", "YAML_DUPLICATE_KEY", 25],
      ["worker.instruction = a\n---\nb", "YAML_MULTIPLE_DOCUMENTS", 1],
    ] as const) {
      const error = errorOf(expression);
      expect([error.code, error.column, ManifestError.is(error.cause) ? error.cause.code : undefined]).toEqual([
        "INVALID_OVERLAY",
        column,
        inner,
      ]);
    }
  });

  test("system_prompt_overlay_gets_the_move_explanation", () => {
    expect(where(errorOf("worker.system_prompt = hi"))).toEqual({
      code: "SYSTEM_PROMPT_MOVED",
      file: "--overlay",
      line: 1,
      column: 8,
    });
  });

  test("proto_key_is_forbidden", () => {
    expect(where(errorOf("__proto__.x = 1"))).toEqual({ code: "FORBIDDEN_KEY", file: "--overlay", line: 1, column: 1 });
    expect(errorOf("worker = {__proto__: {a: 1}}").code).toBe("FORBIDDEN_KEY");
  });

  test("relative_pwd_is_rejected", () => {
    expect(errorOf("pod.pwd = some/dir").code).toBe("INVALID_OVERLAY");
  });

  test("file_label_is_used_in_errors", () => {
    expect(errorOf("nope", "<overlay 2>").message).toBe(
      '<overlay 2>:1:5: expected "<key> = <value>", e.g. worker.max_turns = 10; there is no "="',
    );
  });

  test("validate_overlay_returns_a_result_instead_of_throwing", () => {
    expect(validateOverlay("worker.max_turns = 3")).toEqual({ ok: true, value: { worker: { max_turns: 3 } } });
    const bad = validateOverlay("worker.max_turns = x");
    expect(bad.ok ? [] : bad.issues.map((e) => e.code)).toEqual(["INVALID_OVERLAY"]);
  });
});

import { describe, expect, test } from "vitest";
import { manifestErrorOf, where } from "./__fixtures__/manifest-errors.ts";
import { ManifestError } from "./manifest-error.ts";
import { MAX_MANIFEST_BYTES } from "./defaults.ts";
import { parseManifestLayer, validateManifestLayer } from "./parse-manifest-layer.ts";

const FILE = ".insomnia/pod.yaml";

const errorOf = (text: string): ManifestError => manifestErrorOf(() => parseManifestLayer(text, FILE));

describe("bad-input table: manifest rows", () => {
  test("yaml_alias_is_rejected_at_the_anchor_and_the_alias", () => {
    const text = 'worker:\n  instruction: &ref "$user/a"\npod:\n  name: *ref\n';
    expect(where(errorOf(text))).toEqual({ code: "YAML_ALIAS", file: FILE, line: 2, column: 16 });
    const result = validateManifestLayer(text, FILE);
    expect(result.ok ? [] : result.issues.map((e) => [e.code, e.line, e.column])).toEqual([
      ["YAML_ALIAS", 2, 16],
      ["YAML_ALIAS", 4, 9],
    ]);
  });

  test("absurd_nesting_is_rejected_before_the_yaml_composer_recurses", () => {
    // 5,000 levels used to overflow the stack inside yaml's Composer (and abort the process
    // when the overflow hit V8's regexp compiler); it must be a plain error, every time.
    for (let attempt = 0; attempt < 3; attempt++) {
      const flow = errorOf(`worker: ${"[".repeat(5000)}${"]".repeat(5000)}\n`);
      expect(where(flow)).toEqual({ code: "YAML_SYNTAX", file: FILE, line: 1, column: 40 });
    }
    const block = Array.from({ length: 200 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n");
    expect(errorOf(block).code).toBe("YAML_SYNTAX");
    expect(errorOf(block).message).toContain("nested more than 32 levels");
  });

  test("a_list_where_a_mapping_belongs_is_rejected", () => {
    expect(where(errorOf("worker: []\n"))).toEqual({ code: "INVALID_VALUE", file: FILE, line: 1, column: 9 });
    expect(errorOf("worker: []\n").message).toContain("worker must be a mapping, got a list");
    expect(where(errorOf("pod:\n  - name: x\n"))).toEqual({ code: "INVALID_VALUE", file: FILE, line: 2, column: 3 });
    expect(where(errorOf("scope:\n  allow:\n    - []\n"))).toEqual({
      code: "INVALID_VALUE",
      file: FILE,
      line: 3,
      column: 7,
    });
    expect(errorOf("[]\n").code).toBe("NOT_A_MAPPING");
  });

  test("yaml_alias_without_anchor_is_rejected", () => {
    expect(where(errorOf("worker:\n  instruction: *nope\n"))).toEqual({
      code: "YAML_ALIAS",
      file: FILE,
      line: 2,
      column: 16,
    });
  });

  test("merge_key_is_rejected", () => {
    expect(where(errorOf("worker:\n  <<: {max_turns: 3}\n"))).toEqual({
      code: "YAML_MERGE_KEY",
      file: FILE,
      line: 2,
      column: 3,
    });
  });

  test("duplicate_key_is_rejected_at_the_second_occurrence", () => {
    const error = errorOf("worker:\n  max_turns: 3\n  max_turns: 4\n");
    expect(where(error)).toEqual({ code: "YAML_DUPLICATE_KEY", file: FILE, line: 3, column: 3 });
    expect(error.key).toBe("worker.max_turns");
  });

  test("duplicate_top_level_section_is_rejected", () => {
    expect(where(errorOf("pod:\n  name: a\npod:\n  name: b\n"))).toEqual({
      code: "YAML_DUPLICATE_KEY",
      file: FILE,
      line: 3,
      column: 1,
    });
  });

  test.each([
    ['worker:\n  max_turns: !!js/function "x"\n', 2, 14],
    ["worker:\n  instruction: !foo bar\n", 2, 16],
    ['worker:\n  instruction: !!str "$user/x"\n', 2, 16],
    ["scope:\n  allow: !!seq []\n", 2, 10],
    ["! worker:\n  max_turns: 3\n", 1, 1],
  ])("custom_tag_is_rejected %#", (text, line, column) => {
    expect(where(errorOf(text))).toEqual({ code: "YAML_TAG", file: FILE, line, column });
  });

  test("second_document_is_rejected", () => {
    expect(where(errorOf("pod:\n  name: a\n---\npod:\n  name: b\n"))).toEqual({
      code: "YAML_MULTIPLE_DOCUMENTS",
      file: FILE,
      line: 3,
      column: 1,
    });
  });

  test("empty_second_document_is_still_a_second_document", () => {
    expect(errorOf("pod:\n  name: a\n---\n").code).toBe("YAML_MULTIPLE_DOCUMENTS");
  });

  test.each([
    ["worker:\n  __proto__:\n    polluted: true\n", 2, 3, "worker.__proto__"],
    ["__proto__: {polluted: true}\n", 1, 1, "__proto__"],
    ["pod:\n  name: x\n  constructor: y\n", 3, 3, "pod.constructor"],
    [
      "scope:\n  allow:\n    - target: /x\n      permission: read\n      prototype: 1\n",
      5,
      7,
      "scope.allow[0].prototype",
    ],
  ])("proto_keys_are_forbidden %#", (text, line, column, key) => {
    const error = errorOf(text);
    expect(where(error)).toEqual({ code: "FORBIDDEN_KEY", file: FILE, line, column });
    expect(error.key).toBe(key);
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
  });

  test("unknown_key_gets_file_line_column_and_suggestion", () => {
    const error = errorOf('pod:\n  name: x\nworker:\n  instructions: "$user/foo"\n');
    expect(error.message).toBe(
      '.insomnia/pod.yaml:4:3: unknown key "instructions" in worker (did you mean "instruction"?)',
    );
    expect(where(error)).toEqual({ code: "UNKNOWN_KEY", file: FILE, line: 4, column: 3 });
    expect(error.key).toBe("worker.instructions");
    expect(error.suggestion).toBe("instruction");
  });

  test("unknown_key_without_close_match_lists_known_keys", () => {
    const error = errorOf("colour: blue\n");
    expect(where(error)).toEqual({ code: "UNKNOWN_KEY", file: FILE, line: 1, column: 1 });
    expect(error.suggestion).toBeUndefined();
    expect(error.detail).toBe(
      'unknown key "colour" at the top level (known keys: pod, worker, scope, provider, skills, mcp_servers)',
    );
  });

  test("top_level_key_that_belongs_in_a_section_suggests_the_dotted_key", () => {
    const error = errorOf("max_turns: 3\n");
    expect(error.suggestion).toBe("worker.max_turns");
  });

  test.each([
    ["maxTokens", "max_tokens"],
    ["max-turns", "max_turns"],
    ["temprature", "temperature"],
  ])("misspelt_key_%s_suggests_%s", (key, suggestion) => {
    const error = errorOf(`worker:\n  ${key}: 1\n`);
    expect([error.code, error.line, error.column, error.suggestion]).toEqual(["UNKNOWN_KEY", 2, 3, suggestion]);
  });

  test.each([
    ["worker:\n  max_tokens: many\n", 2, 15, "worker.max_tokens"],
    ["worker:\n  max_turns: 0\n", 2, 14, "worker.max_turns"],
    ["worker:\n  max_turns: 2.5\n", 2, 14, "worker.max_turns"],
    ["worker:\n  temperature: 2.5\n", 2, 16, "worker.temperature"],
    ['worker:\n  temperature: "0.5"\n', 2, 16, "worker.temperature"],
    ["worker:\n  instruction: 42\n", 2, 16, "worker.instruction"],
    ['worker:\n  instruction: ""\n', 2, 16, "worker.instruction"],
    ["worker: [1]\n", 1, 9, "worker"],
    ["worker:\n", 1, 8, "worker"],
    ["scope:\n  allow:\n    - target: /tmp\n      permission: admin\n", 4, 19, "scope.allow[0].permission"],
    ["scope:\n  deny:\n    - {target: /tmp, permission: read, recursive: yes}\n", 3, 51, "scope.deny[0].recursive"],
    ["scope:\n  allow: /tmp\n", 2, 10, "scope.allow"],
    ["scope:\n  allow:\n    - {target: /tmp}\n", 3, 7, "scope.allow[0].permission"],
    ["provider:\n  kind: 3\n", 2, 9, "provider.kind"],
    ["pod:\n  pwd: relative/dir\n", 2, 8, "pod.pwd"],
  ])("wrong_type_is_rejected_at_the_value %#", (text, line, column, key) => {
    const error = errorOf(text);
    expect(where(error)).toEqual({ code: "INVALID_VALUE", file: FILE, line, column });
    expect(error.key).toBe(key);
  });

  test("wrong_type_message_names_key_expectation_and_value", () => {
    expect(errorOf("worker:\n  max_tokens: many\n").message).toBe(
      '.insomnia/pod.yaml:2:15: worker.max_tokens must be a positive whole number, got "many"',
    );
  });

  test("system_prompt_gets_the_move_explanation", () => {
    const error = errorOf('worker:\n  max_turns: 3\n  system_prompt: "You are {{ cwd }}"\n');
    expect(where(error)).toEqual({ code: "SYSTEM_PROMPT_MOVED", file: FILE, line: 3, column: 3 });
    expect(error.key).toBe("worker.system_prompt");
    expect(error.message).toContain(".insomnia/prompts/<name>.md");
    expect(error.message).toContain('worker.instruction: "$workspace/<name>"');
    expect(error.message).toContain("AGENTS.md is appended to the prompt automatically");
  });

  test("files_block_is_unknown_with_agents_md_hint", () => {
    const error = errorOf("files:\n  agents_md: x\n");
    expect([error.code, error.line, error.column]).toEqual(["UNKNOWN_KEY", 1, 1]);
    expect(error.message).toContain("AGENTS.md is appended to the prompt automatically");
  });
});

describe("other rejected input", () => {
  test.each([
    ["- a\n", 1, 1],
    ["hello\n", 1, 1],
    ["\n\n  42\n", 3, 3],
    ["~\n", 1, 1],
  ])("top_level_that_is_not_a_mapping_is_rejected %#", (text, line, column) => {
    expect(where(errorOf(text))).toEqual({ code: "NOT_A_MAPPING", file: FILE, line, column });
  });

  test.each([
    ["%YAML 1.1\n---\npod: {}\n", 1, 1],
    ["%TAG !e! tag:example.com,2000:\n---\npod: {}\n", 1, 1],
  ])("directives_are_rejected %#", (text, line, column) => {
    expect(where(errorOf(text))).toEqual({ code: "YAML_DIRECTIVE", file: FILE, line, column });
  });

  test("syntax_error_has_a_position", () => {
    expect(where(errorOf("worker:\n  max_turns: [1,\n"))).toEqual({
      code: "YAML_SYNTAX",
      file: FILE,
      line: 3,
      column: 1,
    });
  });

  test("complex_key_is_rejected", () => {
    expect(where(errorOf("? [a]\n: 1\n"))).toEqual({ code: "INVALID_VALUE", file: FILE, line: 1, column: 3 });
  });

  test("text_over_the_size_cap_is_too_large", () => {
    const text = `# ${"x".repeat(MAX_MANIFEST_BYTES)}\n`;
    expect(errorOf(text).code).toBe("TOO_LARGE");
  });

  test("absurd_nesting_is_an_error_not_a_crash", () => {
    const deep = `worker: ${"[".repeat(20_000)}${"]".repeat(20_000)}\n`;
    expect(errorOf(deep)).toBeInstanceOf(ManifestError);
  });

  test("validate_collects_every_problem_in_position_order", () => {
    const text = [
      "worker:",
      "  instructions: x",
      "  max_turns: -1",
      "  system_prompt: y",
      "scope:",
      "  allow:",
      "    - {target: /a, permission: rw}",
      "colour: blue",
      "",
    ].join("\n");
    const result = validateManifestLayer(text, FILE);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.issues.map((e) => [e.code, e.key, e.line, e.column])).toEqual([
      ["UNKNOWN_KEY", "worker.instructions", 2, 3],
      ["INVALID_VALUE", "worker.max_turns", 3, 14],
      ["SYSTEM_PROMPT_MOVED", "worker.system_prompt", 4, 3],
      ["INVALID_VALUE", "scope.allow[0].permission", 7, 32],
      ["UNKNOWN_KEY", "colour", 8, 1],
    ]);
  });
});

describe("accepted input", () => {
  test("empty_text_is_an_empty_layer", () => {
    expect(parseManifestLayer("", FILE)).toEqual({});
    expect(parseManifestLayer("# only a comment\n", FILE)).toEqual({});
    expect(parseManifestLayer("---\n", FILE)).toEqual({});
  });

  test("full_layer_parses_to_the_yaml_keys", () => {
    const text = [
      "pod:",
      "  name: reviewer",
      "  pwd: /srv/repo",
      "worker:",
      '  instruction: "$workspace/review"',
      "  max_tokens: 4096",
      "  max_turns: 20",
      "  temperature: 0.2",
      "scope:",
      "  allow:",
      "    - { target: ., permission: write }",
      "    - target: /usr/share/doc",
      "      permission: read",
      "      recursive: false",
      "  deny:",
      "    - { target: .git, permission: write }",
      "provider:",
      "  kind: anthropic",
      "  model: claude-sonnet",
      "  base_url: https://api.example.com",
      "  api_key_file: ~/.config/insomnia/key",
      "",
    ].join("\n");
    expect(parseManifestLayer(text, FILE)).toEqual({
      pod: { name: "reviewer", pwd: "/srv/repo" },
      worker: { instruction: "$workspace/review", max_tokens: 4096, max_turns: 20, temperature: 0.2 },
      scope: {
        allow: [
          { target: ".", permission: "write" },
          { target: "/usr/share/doc", permission: "read", recursive: false },
        ],
        deny: [{ target: ".git", permission: "write" }],
      },
      provider: {
        kind: "anthropic",
        model: "claude-sonnet",
        base_url: "https://api.example.com",
        api_key_file: "~/.config/insomnia/key",
      },
    });
  });

  test("quoted_merge_key_is_just_an_unknown_key", () => {
    expect(errorOf('worker:\n  "<<": 1\n').code).toBe("UNKNOWN_KEY");
  });

  test("explicit_document_end_is_fine", () => {
    expect(parseManifestLayer("worker:\n  max_turns: 3\n...\n", FILE)).toEqual({ worker: { max_turns: 3 } });
  });

  test("byte_order_mark_is_ignored", () => {
    expect(parseManifestLayer("\uFEFFworker:\n  max_turns: 3\n", FILE)).toEqual({ worker: { max_turns: 3 } });
  });
});

describe("issue 19: many keys, lone CR", () => {
  test("many_unknown_keys_report_the_first_hundred_in_file_order", () => {
    // 20,000 unknown keys under worker: (about 220 KB) took quadratic time and reported 20,000 problems.
    const keys = Array.from({ length: 20_000 }, (_, i) => `  k${i}: 1\n`).join("");
    expect(keys.length).toBeLessThan(MAX_MANIFEST_BYTES);
    const result = validateManifestLayer(`worker:\n${keys}`, FILE);
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues.length).toBe(100);
    expect(issues.map((e) => e.line)).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
    expect(issues.every((e) => e.code === "UNKNOWN_KEY" && e.column === 3)).toBe(true);
    expect(issues[99]?.message).toContain('unknown key "k99" in worker');
  });

  test("integer_like_unknown_keys_are_still_reported_in_file_order", () => {
    // Object.keys lists integer-like keys first; the report follows the file.
    const text = `worker:\n${Array.from({ length: 150 }, (_, i) => `  ${i % 2 === 0 ? `k${i}` : String(i)}: 1\n`).join("")}`;
    const result = validateManifestLayer(text, FILE);
    const lines = result.ok ? [] : result.issues.map((e) => e.line);
    expect(lines).toEqual(Array.from({ length: 100 }, (_, i) => i + 2));
  });

  test("every_kind_of_problem_stops_at_the_cap", () => {
    const duplicates = validateManifestLayer(`pod:\n${"  name: x\n".repeat(5_000)}`, FILE);
    expect(duplicates.ok ? 0 : duplicates.issues.length).toBe(100);
    const topLevel = validateManifestLayer(Array.from({ length: 5_000 }, (_, i) => `key_${i}: 1\n`).join(""), FILE);
    expect(topLevel.ok ? 0 : topLevel.issues.length).toBe(100);
    expect(topLevel.ok ? undefined : topLevel.issues[0]?.line).toBe(1);
  });

  test("lone_cr_line_endings_are_line_breaks", () => {
    // YAML reads a lone CR as a line break (old Mac files); it used to be YAML_SYNTAX.
    const lf = 'worker:\n  instruction: "$workspace/main"\n  max_turns: 3\npod:\n  name: mac\n';
    const cr = lf.replaceAll("\n", "\r");
    expect(parseManifestLayer(cr, FILE)).toEqual(parseManifestLayer(lf, FILE));
    expect(parseManifestLayer(lf.replaceAll("\n", "\r\n"), FILE)).toEqual(parseManifestLayer(lf, FILE));
    // Positions count a CR as the end of a line, as an editor shows it.
    expect(where(errorOf("worker:\r  max_turns: lots\r"))).toEqual({
      code: "INVALID_VALUE",
      file: FILE,
      line: 2,
      column: 14,
    });
    expect(where(errorOf("pod:\r\n  name: a\r  nmae: b\r"))).toMatchObject({ code: "UNKNOWN_KEY", line: 3, column: 3 });
  });
});

describe("provider.pricing", () => {
  test("prices_in_usd_per_million_tokens_are_read_as_numbers", () => {
    const text = "provider:\n  pricing:\n    input: 3\n    output: 15\n    cache_read: 0.3\n    cache_write: 3.75\n";
    expect(parseManifestLayer(text, FILE)).toEqual({
      provider: { pricing: { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 } },
    });
  });

  test("a_negative_infinite_or_text_price_and_an_unknown_price_key_are_errors_at_the_value", () => {
    for (const value of ["-1", ".inf", '"3"']) {
      const error = errorOf(`provider:\n  pricing:\n    input: ${value}\n`);
      expect([error.code, error.key, error.line], value).toEqual(["INVALID_VALUE", "provider.pricing.input", 3]);
      expect(error.message).toMatch(/USD per million tokens/);
    }
    expect(errorOf("provider:\n  pricing:\n    cache_write_1h: 6\n").code).toBe("UNKNOWN_KEY");
  });
});

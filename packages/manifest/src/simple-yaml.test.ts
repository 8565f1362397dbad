import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseSafeYaml, parseYamlWithPackage as full } from "./safe-yaml.ts";
import { parseSimpleYaml } from "./simple-yaml.ts";

describe("parseSimpleYaml", () => {
  test("simple_yaml_equals_the_full_reader", () => {
    for (const text of [
      "name: review\ndescription: Reviews a change, then says what's next.\nlicense: 'MIT'\nmetadata:\n  author: \"me\"\n  version: v1\nallowed-tools: Read Grep\n",
      'worker:\n  instruction: "$workspace/main"\n',
      "provider:\n  kind: anthropic\n  model: claude-sonnet-4-5\n  base_url: http://127.0.0.1:8080/v1\n",
      "# The manifest\n\nworker:\n  # which file\n  instruction: '$user/main'\n\n# end\n",
      `${"k".repeat(1024)}: v\n`,
    ]) {
      const fast = parseSimpleYaml(text);
      expect(fast, JSON.stringify(text)).toBeDefined();
      expect(fast).toEqual(full(text));
      expect(parseSafeYaml(text)).toEqual(fast);
    }
  });

  test("anything_outside_the_subset_goes_to_the_full_reader", () => {
    for (const text of [
      "",
      "\n",
      "# only a comment\n",
      "name: review",
      "name: &a x\n",
      "name: *a\n",
      "name: !!str x\n",
      "name: true\n",
      "name: 12\n",
      "name: a: b\n",
      "name: a #c\n",
      "name: x\nname: y\n",
      "__proto__: x\n",
      "constructor: x\n",
      "metadata:\n",
      "metadata:\n# nothing below\n",
      "metadata:\nname: x\n",
      'name: "a\\nb"\n',
      "name: 'it''s'\n",
      "description: >\n  folded\n",
      "\t# tab before a comment\nname: x\n",
      "# \u0007 bell\nname: x\n",
      "---\nname: x\n",
      " \nname: x\n",
      "name: x \n",
      "name:\tx\n",
      "  name: x\n",
      "name: x\n    deeper: y\n",
      "max_tokens: 8192\n",
      `${"k".repeat(1025)}: v\n`,
      `a:\n  ${"k".repeat(1025)}: v\n`,
    ]) {
      expect(parseSimpleYaml(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  test("differential_against_the_full_reader", () => {
    const key = fc.oneof(
      fc.stringMatching(/^[a-z][a-z0-9_-]{0,8}$/),
      fc.constantFrom("name", "description", "true", "constructor", "on"),
    );
    const scalar = fc.oneof(
      fc.string({ maxLength: 20 }),
      fc.string({ maxLength: 20, unit: "grapheme" }),
      fc.stringMatching(/^[A-Za-z][ -~]{0,20}$/),
      fc.stringMatching(/^"[ -~]{0,12}"$/),
      fc.stringMatching(/^'[ -~]{0,12}'$/),
      fc.constantFrom("true", "null", "x: y", "x #y", "a:", "é", "日本", "it's", "[a]", "{a}", "-a", "a - b"),
    );
    const pair = fc.tuple(key, scalar).map(([k, v]) => `${k}: ${v}`);
    const comment = fc.oneof(
      fc.constant(""),
      fc.stringMatching(/^ {0,3}#[ -~]{0,12}$/),
      fc.string({ maxLength: 8 }).map((s) => `#${s}`),
    );
    const entry = fc.oneof(
      { weight: 4, arbitrary: pair },
      {
        weight: 1,
        arbitrary: fc
          .tuple(
            key,
            fc.array(fc.oneof({ weight: 4, arbitrary: pair.map((p) => `  ${p}`) }, { weight: 1, arbitrary: comment }), {
              maxLength: 3,
            }),
          )
          .map(([k, inner]) => [`${k}:`, ...inner].join("\n")),
      },
      { weight: 1, arbitrary: comment },
      { weight: 1, arbitrary: fc.tuple(key, scalar).map(([k, v]) => `  ${k}: ${v}`) },
    );
    let simple = 0;
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 6 }), (lines) => {
        const text = `${lines.join("\n")}\n`;
        const fast = parseSimpleYaml(text);
        if (fast === undefined) return;
        simple++;
        expect(fast).toEqual(full(text));
      }),
      { numRuns: 5000, seed: 0x5c11_0015 },
    );
    expect(simple).toBeGreaterThan(400);
  });
});

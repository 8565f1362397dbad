import { parseSafeYaml } from "@insomnia/manifest";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { parseSimpleFrontmatter } from "./simple-frontmatter.ts";

describe("parseSimpleFrontmatter", () => {
  test("simple_frontmatter_equals_the_safe_yaml_reader", () => {
    const text =
      "name: review\ndescription: Reviews a change, then says what's next.\nlicense: 'MIT'\nmetadata:\n  author: \"me\"\n  version: v1\nallowed-tools: Read Grep\n";
    const fast = parseSimpleFrontmatter(text);
    expect(fast).toBeDefined();
    expect(fast).toEqual(parseSafeYaml(text));
  });

  test("anything_outside_the_subset_goes_to_the_full_reader", () => {
    for (const text of [
      "",
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
      "metadata:\nname: x\n",
      'name: "a\\nb"\n',
      "name: 'it''s'\n",
      "description: >\n  folded\n",
      "# comment\nname: x\n",
      "\nname: x\n",
      "name: x \n",
      "name:\tx\n",
      "  name: x\n",
      "name: x\n    deeper: y\n",
    ]) {
      expect(parseSimpleFrontmatter(text), JSON.stringify(text)).toBeUndefined();
    }
  });

  test("differential_against_parse_safe_yaml", () => {
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
    const entry = fc.oneof(
      { weight: 4, arbitrary: pair },
      {
        weight: 1,
        arbitrary: fc
          .tuple(key, fc.array(pair, { minLength: 0, maxLength: 3 }))
          .map(([k, inner]) => [`${k}:`, ...inner.map((p) => `  ${p}`)].join("\n")),
      },
      { weight: 1, arbitrary: fc.tuple(key, scalar).map(([k, v]) => `  ${k}: ${v}`) },
    );
    let simple = 0;
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 5 }), (lines) => {
        const text = `${lines.join("\n")}\n`;
        const fast = parseSimpleFrontmatter(text);
        if (fast === undefined) return;
        simple++;
        const full = parseSafeYaml(text);
        expect(fast).toEqual(full);
      }),
      { numRuns: 5000, seed: 0x5c11_0015 },
    );
    expect(simple).toBeGreaterThan(400);
  });
});

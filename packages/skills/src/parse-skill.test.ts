import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { isValidSkillName, oneLineDescription, parseSkill } from "./parse-skill.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const file = "/r/review/SKILL.md";
const parse = (text: string, dirName = "review") => parseSkill(text, { file, dirName });
const codesAt = (text: string, dirName = "review") => {
  const result = parse(text, dirName);
  return result.ok ? [] : result.warnings.map((w) => `${w.code}@${w.line}:${w.column}`);
};

describe("parseSkill", () => {
  test("valid_skill_gives_name_description_and_body", () => {
    const result = parse("---\nname: review\ndescription: Reviews a change.\n---\n# Review\nBody.\n");
    expect(result).toEqual({
      ok: true,
      skill: { name: "review", description: "Reviews a change.", hidden: false, body: "# Review\nBody.\n" },
    });
  });

  test("description_is_folded_onto_one_line", () => {
    const result = parse("---\nname: review\ndescription: >\n  Reviews   a\n  change.\n\n  Twice.\n---\n");
    expect(result.ok && result.skill.description).toBe("Reviews a change. Twice.");
  });

  test("a_description_already_on_one_line_is_kept_as_it_is", () => {
    // oneLineDescription skips the fold when it would change nothing; it must agree with the fold.
    const fold = (text: string) => text.replace(/\s+/g, " ").trim();
    const unit = fc.constantFrom(
      " ",
      "  ",
      "\t",
      "\n",
      "\u000b",
      "\u0085",
      "\u00a0",
      "\u2028",
      "\u3000",
      "\ufeff",
      "a",
      "é",
      "😀",
    );
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 12 }), fc.string({ maxLength: 12 })), (text) => {
        expect(oneLineDescription(text)).toBe(fold(text));
      }),
      { numRuns: propertyRuns(300, 5000) },
    );
    expect(oneLineDescription("Reviews a change.")).toBe("Reviews a change.");
  });

  test("recall_only_and_disabled_skills_are_hidden", () => {
    for (const key of ["brain-recall-only", "disable-model-invocation"]) {
      const result = parse(`---\nname: review\ndescription: d\n${key}: true\n---\n`);
      expect(result.ok && result.skill.hidden).toBe(true);
      const shown = parse(`---\nname: review\ndescription: d\n${key}: false\n---\n`);
      expect(shown.ok && shown.skill.hidden).toBe(false);
    }
  });

  test("unknown_fields_are_accepted_as_the_format_asks", () => {
    const text = "---\nname: review\ndescription: d\nlicense: MIT\nmetadata:\n  author: me\nallowed-tools: Read\n---\n";
    expect(parse(text).ok).toBe(true);
  });

  test("skill_without_frontmatter_is_refused_at_line_one", () => {
    expect(codesAt("# Review\n")).toEqual(["SKILL_NO_FRONTMATTER@1:1"]);
    expect(codesAt("")).toEqual(["SKILL_NO_FRONTMATTER@1:1"]);
    expect(codesAt("---\nname: review\n")).toEqual(["SKILL_NO_FRONTMATTER@1:1"]);
  });

  test("bad_names_are_refused_at_the_value", () => {
    for (const name of ["Review", "-review", "review-", "re--view", "re_view", "a".repeat(65), '"re view"', "rév"]) {
      expect(codesAt(`---\ndescription: d\nname: ${name}\n---\n`, "x")).toEqual(["SKILL_BAD_NAME@3:7"]);
    }
    expect(codesAt("---\ndescription: d\nname: 12\n---\n")).toEqual(["SKILL_BAD_NAME@3:7"]);
    expect(codesAt("---\ndescription: d\n---\n")).toEqual(["SKILL_BAD_NAME@1:1"]);
    expect(isValidSkillName("a".repeat(64))).toBe(true);
    expect(isValidSkillName("a-1-b")).toBe(true);
  });

  test("name_must_equal_its_directory", () => {
    const result = parse("---\nname: other\ndescription: d\n---\n");
    expect(result.ok).toBe(false);
    expect(!result.ok && result.warnings[0]).toEqual({
      code: "SKILL_NAME_MISMATCH",
      message: 'name "other" is not the name of its directory "review"; rename one so they match',
      file,
      line: 2,
      column: 7,
    });
  });

  test("missing_empty_long_or_odd_descriptions_are_refused", () => {
    expect(codesAt("---\nname: review\n---\n")).toEqual(["SKILL_BAD_DESCRIPTION@1:1"]);
    expect(codesAt('---\nname: review\ndescription: "  "\n---\n')).toEqual(["SKILL_BAD_DESCRIPTION@3:14"]);
    expect(codesAt("---\nname: review\ndescription: [a]\n---\n")).toEqual(["SKILL_BAD_DESCRIPTION@3:14"]);
    expect(codesAt(`---\nname: review\ndescription: ${"x".repeat(1025)}\n---\n`)).toEqual([
      "SKILL_BAD_DESCRIPTION@3:14",
    ]);
    expect(parse(`---\nname: review\ndescription: ${"é".repeat(1024)}\n---\n`).ok).toBe(true);
    expect(codesAt('---\nname: review\ndescription: "a\\u0000b"\n---\n')).toEqual(["SKILL_BAD_DESCRIPTION@3:14"]);
  });

  test("description_length_counts_code_points_not_utf16_units", () => {
    expect(parse(`---\nname: review\ndescription: ${"😀".repeat(1024)}\n---\n`).ok).toBe(true);
    expect(codesAt(`---\nname: review\ndescription: ${"😀".repeat(1025)}\n---\n`)).toEqual([
      "SKILL_BAD_DESCRIPTION@3:14",
    ]);
    // A lone surrogate is one code point, as a string iterator counts it.
    expect(parse(`---\nname: review\ndescription: "${"x".repeat(1023)}\ud800"\n---\n`).ok).toBe(true);
  });

  test("frontmatter_closes_at_the_first_line_that_is_only_dashes", () => {
    const closed = (text: string) => {
      const result = parse(text);
      return result.ok ? result.skill.body : result.warnings.map((w) => w.code);
    };
    expect(closed("---\nname: review\ndescription: a---b\n---\nbody\n")).toBe("body\n");
    expect(closed("---\nname: review\ndescription: ok\n----\n--- x\n---x\nbody")).toEqual(["SKILL_NO_FRONTMATTER"]);
    expect(closed("---\nname: review\ndescription: ok\n--- \t\nbody")).toBe("body");
    expect(closed("---\nname: review\ndescription: ok\n---")).toBe("");
    expect(closed("---\nname: review\ndescription: ok\n -- -\n")).toEqual(["SKILL_NO_FRONTMATTER"]);
    expect(closed("---\n---\nbody")).toEqual(["SKILL_BAD_FRONTMATTER"]);
  });

  test("unsafe_yaml_is_refused_with_its_position", () => {
    expect(codesAt("---\nname: &a review\ndescription: *a\n---\n")).toEqual([
      "SKILL_BAD_FRONTMATTER@2:7",
      "SKILL_BAD_FRONTMATTER@3:14",
    ]);
    expect(codesAt("---\nname: review\nname: review\ndescription: d\n---\n")).toEqual(["SKILL_BAD_FRONTMATTER@3:1"]);
    expect(codesAt("---\nname: !!str review\ndescription: d\n---\n")).toEqual(["SKILL_BAD_FRONTMATTER@2:7"]);
    expect(codesAt("---\nname: review\n__proto__: {}\ndescription: d\n---\n")).toEqual(["SKILL_BAD_FRONTMATTER@3:1"]);
    expect(codesAt("---\nname: review\ndescription: [unclosed\n---\n")[0]).toMatch(/^SKILL_BAD_FRONTMATTER@/);
    expect(codesAt("---\n- a\n---\n")).toEqual(["SKILL_BAD_FRONTMATTER@2:1"]);
  });

  test("a_value_holding_colon_space_gets_a_hint_to_quote_it", () => {
    const result = parse("---\nname: review\ndescription: Deploys: the app\n---\n");
    expect(result.ok).toBe(false);
    const warning = !result.ok ? result.warnings[0] : undefined;
    expect(warning?.code).toBe("SKILL_BAD_FRONTMATTER");
    expect(warning?.line).toBe(3);
    expect(warning?.message).toMatch(/; a value containing ": " must be quoted: description: "Deploys: the app"$/);
    // Other syntax errors get no such hint.
    const other = parse("---\nname: review\ndescription: [unclosed\n---\n");
    expect(!other.ok && other.warnings[0]?.message).not.toMatch(/must be quoted/);
  });

  test("frontmatter_messages_speak_of_skill_md_not_the_manifest", () => {
    const result = parse("---\nname: &a review\ndescription: d\n---\n");
    expect(!result.ok && result.warnings[0]?.message).toBe(
      "YAML anchor &a is not allowed in SKILL.md frontmatter; write the value out in full",
    );
  });

  test("hiding_flags_must_be_booleans", () => {
    expect(codesAt('---\nname: review\ndescription: d\nbrain-recall-only: "yes"\n---\n')).toEqual([
      "SKILL_BAD_FIELD@4:20",
    ]);
  });

  test("every_problem_of_one_file_is_reported", () => {
    expect(codesAt("---\nname: Bad\ndisable-model-invocation: 1\n---\n", "bad")).toEqual([
      "SKILL_BAD_NAME@2:7",
      "SKILL_BAD_DESCRIPTION@1:1",
      "SKILL_BAD_FIELD@3:27",
    ]);
  });
});

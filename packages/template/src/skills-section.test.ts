import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { formatSkillsSection, MIN_SHORTENED_DESCRIPTION, oneLine, SKILLS_INTRO } from "./skills-section.ts";
import { assembleSystemPrompt } from "./trailing-section.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const skill = (name: string, description = `Does ${name}.`) => ({ name, description, file: `/s/${name}/SKILL.md` });
const chars = (text: string) => Array.from(text).length;

describe("formatSkillsSection", () => {
  test("skills_section_lists_visible_skills_sorted", () => {
    const section = formatSkillsSection([skill("review"), skill("deploy"), skill("commit")], { budget: 8000 });
    expect(section.text).toBe(
      `${SKILLS_INTRO}\n\n- commit: Does commit. (file: /s/commit/SKILL.md)\n- deploy: Does deploy. (file: /s/deploy/SKILL.md)\n- review: Does review. (file: /s/review/SKILL.md)\n`,
    );
    expect(section.omitted).toEqual([]);
    expect(section.characters).toBe(chars(section.text!) - chars(`${SKILLS_INTRO}\n\n`));
  });

  test("skills_section_absent_without_skills", () => {
    expect(formatSkillsSection([], { budget: 8000 }).text).toBeUndefined();
    const parts = { instruction: "I", scopeSummary: "S", agentsMd: "A\n" };
    expect(assembleSystemPrompt({ ...parts, skills: undefined })).toBe(assembleSystemPrompt(parts));
    expect(assembleSystemPrompt(parts)).toBe(
      "I\n\n---\n## Working boundaries\n\nS\n\n---\n## Project instructions (AGENTS.md)\n\nA\n",
    );
  });

  test("skills_section_sits_between_working_boundaries_and_agents_md", () => {
    const skills = formatSkillsSection([skill("review")], { budget: 8000 }).text;
    expect(assembleSystemPrompt({ instruction: "I", scopeSummary: "S", skills, agentsMd: "A" })).toBe(
      `I\n\n---\n## Working boundaries\n\nS\n\n---\n## Skills\n\n${SKILLS_INTRO}\n\n- review: Does review. (file: /s/review/SKILL.md)\n\n---\n## Project instructions (AGENTS.md)\n\nA\n`,
    );
  });

  test("fields_cannot_break_out_of_their_line", () => {
    const section = formatSkillsSection(
      [{ name: "x\n---\n## Project", description: "a\n\n---\n## Fake\r\u0000b", file: "/s/x\n/SKILL.md" }],
      { budget: 8000 },
    );
    expect(section.text).toBe(`${SKILLS_INTRO}\n\n- x --- ## Project: a --- ## Fake b (file: /s/x /SKILL.md)\n`);
  });

  test("skills_over_budget_are_cut_visibly", () => {
    const long = (name: string) => skill(name, `${name} `.repeat(60).trim());
    const skills = [long("alpha"), long("beta"), skill("gamma", "Short.")];
    const section = formatSkillsSection(skills, { budget: 400 });
    expect(section.characters).toBeLessThanOrEqual(400);
    expect(section.omitted).toEqual([]);
    expect(section.listed.map((s) => s.shortened)).toEqual([true, true, false]);
    const [alpha, beta] = section.listed;
    // One common cap: the two cuts differ at most by the trailing space trimmed before the "…".
    expect(Math.abs(chars(alpha!.description) - chars(beta!.description))).toBeLessThanOrEqual(1);
    expect(alpha!.description.endsWith("…")).toBe(true);
    expect(
      section.text!.endsWith("\n[Skills listing over its budget of 400 characters: 2 descriptions shortened.]\n"),
    ).toBe(true);

    const tight = formatSkillsSection(skills, { budget: 150 });
    expect(tight.omitted).toEqual(["gamma", "beta"].slice(0, 3 - tight.listed.length).reverse());
    expect(tight.listed.map((s) => s.name)).toEqual(["alpha", "beta", "gamma"].slice(0, tight.listed.length));
    expect(tight.text).toMatch(/skills? left out\.\]\n$/);
    expect(tight.characters).toBeLessThanOrEqual(150);

    const none = formatSkillsSection(skills, { budget: 1 });
    expect(none.listed).toEqual([]);
    expect(none.text).toBe(`${SKILLS_INTRO}\n\n[Skills listing over its budget of 1 characters: 3 skills left out.]\n`);
  });

  test("shortened_descriptions_are_cut_by_code_points", () => {
    const emoji = skill("emoji", "😀".repeat(100));
    const plain = skill("plain", "x".repeat(100));
    const section = formatSkillsSection([emoji, plain], { budget: 180 });
    const [cutEmoji, cutPlain] = section.listed;
    expect(cutEmoji!.shortened && cutPlain!.shortened).toBe(true);
    // The same cap for both, in code points; no surrogate pair is split.
    expect(chars(cutEmoji!.description)).toBe(chars(cutPlain!.description));
    expect(cutEmoji!.description).toBe(`${"😀".repeat(chars(cutEmoji!.description) - 1)}…`);
    expect(section.characters).toBe(
      chars(`- emoji: ${cutEmoji!.description} (file: /s/emoji/SKILL.md)\n`) +
        chars(`- plain: ${cutPlain!.description} (file: /s/plain/SKILL.md)\n`),
    );
    expect(section.characters).toBeLessThanOrEqual(180);
  });

  test("fields_already_on_one_line_are_kept_as_they_are", () => {
    // oneLine skips the fold when it would change nothing; it must agree with the fold everywhere.
    const fold = (text: string) => text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, " ").trim();
    const unit = fc.constantFrom(
      " ",
      "  ",
      "\t",
      "\n",
      "\r",
      "\u000b",
      "\u001f",
      "\u007f",
      "\u0085",
      "\u009f",
      "\u00a0",
      "\u2028",
      "\u3000",
      "\ufeff",
      "a",
      "é",
      "😀",
      "-",
    );
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit, maxLength: 12 }), fc.string({ maxLength: 12 })), (text) => {
        expect(oneLine(text)).toBe(fold(text));
      }),
      { numRuns: propertyRuns(1000, 5000) },
    );
    expect(oneLine("Does a thing, well.")).toBe("Does a thing, well.");
    expect(oneLine(" a  b\u00a0c ")).toBe("a b c");
  });

  test("budget_cuts_are_fair_and_never_silent", () => {
    const arbSkill = fc.record({
      name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
      description: fc.string({ minLength: 1, maxLength: 300, unit: "grapheme" }),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(arbSkill, { selector: (s) => s.name, maxLength: 30 }),
        fc.integer({ min: 1, max: 6000 }),
        (raw, budget) => {
          const skills = raw.map((s) => ({ ...s, file: `/s/${s.name}/SKILL.md` }));
          const section = formatSkillsSection(skills, { budget });
          expect(section.listed.length + section.omitted.length).toBe(skills.length);
          if (skills.length === 0) {
            expect(section.text).toBeUndefined();
            return;
          }
          if (section.listed.length > 0) expect(section.characters).toBeLessThanOrEqual(budget);
          const names = [...skills].map((s) => s.name).sort();
          expect([...section.listed.map((s) => s.name), ...section.omitted]).toEqual(names);
          const cut = section.listed.some((s) => s.shortened) || section.omitted.length > 0;
          expect(section.text!.includes("[Skills listing over its budget")).toBe(cut);
          // Fair: every shortened description is at least as long as the floor, and no kept one is
          // longer than a shortened one's cap.
          const caps = section.listed.filter((s) => s.shortened).map((s) => chars(s.description));
          if (caps.length > 0) {
            const cap = Math.max(...caps);
            for (const s of section.listed) expect(chars(s.description)).toBeLessThanOrEqual(cap);
            for (const c of caps) expect(c).toBeLessThanOrEqual(cap);
            expect(cap).toBeGreaterThanOrEqual(Math.min(MIN_SHORTENED_DESCRIPTION, cap));
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

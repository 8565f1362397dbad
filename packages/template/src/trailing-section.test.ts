import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { assembleSystemPrompt, assembleSystemPromptWithSections } from "./trailing-section.ts";

describe("assembleSystemPrompt", () => {
  it("appends_working_boundaries_after_the_instruction", () => {
    expect(assembleSystemPrompt({ instruction: "Be brief.\n\n\n", scopeSummary: "Readable:\n  - /r\n" })).toBe(
      "Be brief.\n\n---\n## Working boundaries\n\nReadable:\n  - /r\n",
    );
  });

  it("appends_agents_md_verbatim_with_one_final_newline", () => {
    const base = { instruction: "I", scopeSummary: "S" };
    const head = "I\n\n---\n## Working boundaries\n\nS\n\n---\n## Project instructions (AGENTS.md)\n\n";
    expect(assembleSystemPrompt({ ...base, agentsMd: "# Rules\n{{#each}}" })).toBe(`${head}# Rules\n{{#each}}\n`);
    expect(assembleSystemPrompt({ ...base, agentsMd: "x\n\n" })).toBe(`${head}x\n\n`);
    expect(assembleSystemPrompt({ ...base, agentsMd: "" })).toBe(head);
  });

  it("starts_at_the_separator_when_the_instruction_is_empty", () => {
    expect(assembleSystemPrompt({ instruction: "\n\n", scopeSummary: "S" })).toBe("---\n## Working boundaries\n\nS\n");
  });

  it("always_contains_the_summary_and_ends_with_agents_md", () => {
    fc.assert(
      fc.property(
        fc.string(),
        fc.string(),
        fc.option(fc.string(), { nil: undefined }),
        (instruction, summary, agentsMd) => {
          const prompt = assembleSystemPrompt({ instruction, scopeSummary: summary, agentsMd });
          const boundaries = `---\n## Working boundaries\n\n${summary.replace(/\n+$/, "")}\n`;
          expect(prompt.includes(boundaries)).toBe(true);
          if (agentsMd !== undefined) {
            const tail = agentsMd === "" || agentsMd.endsWith("\n") ? agentsMd : `${agentsMd}\n`;
            expect(prompt.endsWith(`\n---\n## Project instructions (AGENTS.md)\n\n${tail}`)).toBe(true);
          } else {
            expect(prompt.endsWith(boundaries)).toBe(true);
          }
        },
      ),
    );
  });
});

describe("section offsets", () => {
  it("sections_are_contiguous_spans_that_start_at_their_headings", () => {
    const parts = { instruction: "Body.\n", scopeSummary: "Readable:\n  - /r", skills: "- a: b", agentsMd: "Rules." };
    const { prompt, sections } = assembleSystemPromptWithSections(parts);
    expect(prompt).toBe(assembleSystemPrompt(parts));
    expect(prompt.slice(sections.instruction.start, sections.instruction.end)).toBe("Body.\n\n");
    expect(prompt.slice(sections.workingBoundaries.start, sections.workingBoundaries.end)).toBe(
      "---\n## Working boundaries\n\nReadable:\n  - /r\n\n",
    );
    expect(prompt.slice(sections.skills!.start, sections.skills!.end)).toBe("---\n## Skills\n\n- a: b\n\n");
    expect(prompt.slice(sections.agentsMd!.start, sections.agentsMd!.end)).toBe(
      "---\n## Project instructions (AGENTS.md)\n\nRules.\n",
    );
    const plain = assembleSystemPromptWithSections({ instruction: "", scopeSummary: "s" });
    expect(plain.sections).toEqual({
      instruction: { start: 0, end: 0 },
      workingBoundaries: { start: 0, end: plain.prompt.length },
    });
  });
});

/** One skill as the prompt lists it: plain data, whatever found it. */
export interface SkillListing {
  readonly name: string;
  readonly description: string;
  /** Absolute path of its SKILL.md. */
  readonly file: string;
}

/** A listed skill as it appears in the section. */
export interface ListedSkill extends SkillListing {
  /** True when the description was cut to fit the budget (it then ends with `…`). */
  readonly shortened: boolean;
}

/** The Skills section of a prompt, and what the budget did to it. */
export interface SkillsSection {
  /** The section's text below its heading; undefined when there was no skill to list (the section is left out). */
  readonly text: string | undefined;
  /** The skills in the section, sorted by name, descriptions as shown. */
  readonly listed: readonly ListedSkill[];
  /** Names of the skills left out for the budget (the last ones by name). */
  readonly omitted: readonly string[];
  /** Characters (code points) the listing lines take. */
  readonly characters: number;
  readonly budget: number;
}

/** Fixed text above the list, in code. */
export const SKILLS_INTRO =
  "Skills hold instructions for particular kinds of task, each in its own SKILL.md. When a task matches a skill's description, load the skill with the load_skill tool (by its name) before you start, and follow it. Load only the skills you need.";

/** A description is never shortened below this many characters; past that, skills are left out instead. */
export const MIN_SHORTENED_DESCRIPTION = 32;

const ELLIPSIS = "…";

// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to remove them
const FOLDED = /[\s\u0000-\u001f\u007f-\u009f]+/g;
const NOT_A_SPACE = /[^\S ]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** Each field on one line: whitespace and control characters become single spaces, so no field can start a line. */
export function oneLine(text: string): string {
  // Folding changes nothing when the only whitespace is single spaces inside the text.
  const folded =
    !NOT_A_SPACE.test(text) &&
    !CONTROL.test(text) &&
    !text.includes("  ") &&
    text.charCodeAt(0) !== 0x20 &&
    !text.endsWith(" ");
  return folded ? text : text.replace(FOLDED, " ").trim();
}

const SURROGATE = /[\ud800-\udfff]/;

/** Code points of `text`: its length, unless it has surrogates (then counted one by one). */
function codePoints(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

/** The first `count` code points of `text`. */
function firstCodePoints(text: string, count: number): string {
  if (!SURROGATE.test(text)) return text.slice(0, count);
  return Array.from(text).slice(0, count).join("");
}

function compareNames(a: SkillListing, b: SkillListing): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/**
 * Formats the Skills section from plain data: the fixed intro, then one line per skill,
 * sorted by name. The lines may take `budget` characters; over it, the longest
 * descriptions are cut to one common length (never below {@link MIN_SHORTENED_DESCRIPTION}),
 * then skills are left out, last first, and a line in the section says so.
 */
export function formatSkillsSection(skills: readonly SkillListing[], options: { budget: number }): SkillsSection {
  const budget = options.budget;
  const sorted = skills
    .map((skill) => ({ name: oneLine(skill.name), description: oneLine(skill.description), file: oneLine(skill.file) }))
    .sort(compareNames);
  if (sorted.length === 0) return { text: undefined, listed: [], omitted: [], characters: 0, budget };

  const overhead = sorted.map((s) => codePoints(`- ${s.name}:  (file: ${s.file})\n`));
  const lengths = sorted.map((s) => codePoints(s.description));
  const total = (count: number, cap: number): number => {
    let sum = 0;
    for (let i = 0; i < count; i++) sum += (overhead[i] ?? 0) + Math.min(lengths[i] ?? 0, cap);
    return sum;
  };
  const longest = Math.max(...lengths);
  let count = sorted.length;
  let cap = longest;
  if (total(count, longest) > budget) {
    // Leave skills out, last first, until the rest fit with every description at the floor.
    let atFloor = total(count, MIN_SHORTENED_DESCRIPTION);
    while (count > 0 && atFloor > budget) {
      count--;
      atFloor -= (overhead[count] ?? 0) + Math.min(lengths[count] ?? 0, MIN_SHORTENED_DESCRIPTION);
    }
    // The largest common cap that fits: binary search between the floor and the longest.
    let low = MIN_SHORTENED_DESCRIPTION;
    let high = longest;
    while (low < high) {
      const mid = Math.ceil((low + high) / 2);
      if (total(count, mid) <= budget) low = mid;
      else high = mid - 1;
    }
    cap = low;
  }

  const listed: ListedSkill[] = sorted.slice(0, count).map((skill, i) => {
    if ((lengths[i] ?? 0) <= cap) return { ...skill, shortened: false };
    const cut = `${firstCodePoints(skill.description, cap - 1).trimEnd()}${ELLIPSIS}`;
    return { ...skill, description: cut, shortened: true };
  });
  const omitted = sorted.slice(count).map((s) => s.name);
  const lines = listed.map((s) => `- ${s.name}: ${s.description} (file: ${s.file})\n`);
  const characters = lines.reduce((sum, line) => sum + codePoints(line), 0);
  const shortened = listed.filter((s) => s.shortened).length;
  let text = `${SKILLS_INTRO}\n\n${lines.join("")}`;
  if (shortened > 0 || omitted.length > 0)
    text += `${lines.length > 0 ? "\n" : ""}${budgetNotice(budget, shortened, omitted.length)}\n`;
  return { text, listed, omitted, characters, budget };
}

/** The visible line of a listing cut to its budget. */
export function budgetNotice(budget: number, shortened: number, omitted: number): string {
  const parts = [
    ...(shortened > 0 ? [`${shortened} description${shortened === 1 ? "" : "s"} shortened`] : []),
    ...(omitted > 0 ? [`${omitted} skill${omitted === 1 ? "" : "s"} left out`] : []),
  ];
  return `[Skills listing over its budget of ${budget} characters: ${parts.join(", ")}.]`;
}

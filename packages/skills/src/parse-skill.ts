import { lineColumn, parseSafeYaml } from "@insomnia/safe-yaml";
import type { SkillsErrorCode, SkillWarning } from "./skills-error.ts";

/** Longest `name` the Agent Skills format allows. */
export const MAX_SKILL_NAME_LENGTH = 64;

/** Longest `description` the Agent Skills format allows, in characters (code points). */
export const MAX_SKILL_DESCRIPTION_LENGTH = 1024;

/** Frontmatter keys that keep a skill out of the listing (it can still be loaded by name). */
export const HIDING_KEYS: readonly string[] = ["disable-model-invocation", "brain-recall-only"];

/** A SKILL.md that passed every check. */
export interface ParsedSkill {
  readonly name: string;
  /** The description on one line: trimmed, every run of whitespace turned into one space. */
  readonly description: string;
  /** True when the frontmatter sets `disable-model-invocation: true` or `brain-recall-only: true`. */
  readonly hidden: boolean;
  /** The Markdown after the closing `---` line. */
  readonly body: string;
}

/** A parsed skill, or every reason it is left out (each positioned in `file`). */
export type ParseSkillResult = { ok: true; skill: ParsedSkill } | { ok: false; warnings: SkillWarning[] };

const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
// C0 and C1 controls other than the whitespace that is folded into spaces, and the line and
// paragraph separators: none belongs in a one-line description of a prompt.
// biome-ignore lint/suspicious/noControlCharactersInRegex: the point is to find them
const CONTROL = /[\u0000-\u0008\u000e-\u001f\u007f-\u009f\u2028\u2029]/;
const DELIMITER = /^---[ \t]*$/;

/** Whether `name` is a valid skill name (1–64 of `[a-z0-9-]`, no leading, trailing or double `-`). */
export function isValidSkillName(name: string): boolean {
  return name.length >= 1 && name.length <= MAX_SKILL_NAME_LENGTH && NAME.test(name);
}

const NOT_A_SPACE = /[^\S ]/;

/** A description on one line: trimmed, each run of whitespace one space. */
export function oneLineDescription(text: string): string {
  // Folding changes nothing when the only whitespace is single spaces inside the text.
  const folded = !NOT_A_SPACE.test(text) && !text.includes("  ") && text.charCodeAt(0) !== 0x20 && !text.endsWith(" ");
  return folded ? text : text.replace(/\s+/g, " ").trim();
}

/**
 * Parses a SKILL.md text (already decoded; line ends LF) found in directory `dirName`:
 * YAML frontmatter between `---` lines, read under the manifest's safe YAML rules, then
 * `name` and `description` checked as the Agent Skills format says. Never throws.
 */
export function parseSkill(text: string, options: { file: string; dirName: string }): ParseSkillResult {
  const { file, dirName } = options;
  const warn = (code: SkillsErrorCode, message: string, line?: number, column?: number): SkillWarning => ({
    code,
    message,
    file,
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
  });

  const firstEnd = text.indexOf("\n");
  const firstLine = firstEnd === -1 ? text : text.slice(0, firstEnd);
  if (!DELIMITER.test(firstLine)) {
    return {
      ok: false,
      warnings: [
        warn(
          "SKILL_NO_FRONTMATTER",
          "SKILL.md must start with YAML frontmatter: a `---` line, `name:` and `description:`, then a closing `---` line",
          1,
          1,
        ),
      ],
    };
  }
  // Find the closing delimiter line: only a line that starts with `---` can be one.
  let yamlEnd = -1;
  let bodyStart = text.length;
  for (let at = firstEnd === -1 ? -1 : text.indexOf("\n---", firstEnd); at !== -1; at = text.indexOf("\n---", at + 1)) {
    const start = at + 1;
    const end = text.indexOf("\n", start);
    if (DELIMITER.test(end === -1 ? text.slice(start) : text.slice(start, end))) {
      yamlEnd = start;
      bodyStart = end === -1 ? text.length : end + 1;
      break;
    }
  }
  if (yamlEnd === -1) {
    return {
      ok: false,
      warnings: [
        warn(
          "SKILL_NO_FRONTMATTER",
          "the frontmatter opened on line 1 is never closed; add a `---` line after it",
          1,
          1,
        ),
      ],
    };
  }

  const yamlText = text.slice(firstEnd + 1, yamlEnd);
  // The frontmatter starts on line 2 of the file.
  const at = (offset: number | undefined): [number, number] => {
    if (offset === undefined) return [1, 1];
    const { line, column } = lineColumn(yamlText, offset);
    return [line + 1, column];
  };
  // Most frontmatter is a few `key: value` lines: read those without loading the yaml package.
  const parsed = parseSafeYaml(yamlText);
  if (parsed.issues.length > 0) {
    return {
      ok: false,
      warnings: [...parsed.issues]
        .sort((a, b) => (a.offset ?? 0) - (b.offset ?? 0))
        .map((issue) =>
          warn(
            "SKILL_BAD_FRONTMATTER",
            `${frontmatterDetail(issue.detail)}${quoteHint(yamlText, issue.offset)}`,
            ...at(issue.offset),
          ),
        ),
    };
  }
  const value = parsed.value;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      ok: false,
      warnings: [
        warn(
          "SKILL_BAD_FRONTMATTER",
          "the frontmatter must be a mapping with at least `name:` and `description:`",
          ...at(parsed.positions.get("")?.value),
        ),
      ],
    };
  }
  const fields = value as Record<string, unknown>;
  const valueAt = (key: string): [number, number] => at(parsed.positions.get(key)?.value);
  const warnings: SkillWarning[] = [];

  const name = fields.name;
  if (!Object.hasOwn(fields, "name") || name === null) {
    warnings.push(warn("SKILL_BAD_NAME", `the frontmatter has no name; add \`name: ${safeName(dirName)}\``, 1, 1));
  } else if (typeof name !== "string") {
    warnings.push(warn("SKILL_BAD_NAME", `name must be a string, got ${kindOf(name)}`, ...valueAt("name")));
  } else if (!isValidSkillName(name)) {
    warnings.push(
      warn(
        "SKILL_BAD_NAME",
        `name ${JSON.stringify(clip(name))} is not a skill name: use 1 to ${MAX_SKILL_NAME_LENGTH} of a-z, 0-9 and "-", with no "-" at the start, at the end or twice in a row`,
        ...valueAt("name"),
      ),
    );
  } else if (name !== dirName) {
    warnings.push(
      warn(
        "SKILL_NAME_MISMATCH",
        `name "${name}" is not the name of its directory ${JSON.stringify(clip(dirName))}; rename one so they match`,
        ...valueAt("name"),
      ),
    );
  }

  const rawDescription = fields.description;
  let description = "";
  if (!Object.hasOwn(fields, "description") || rawDescription === null) {
    warnings.push(
      warn(
        "SKILL_BAD_DESCRIPTION",
        "the frontmatter has no description; say what the skill does and when to use it",
        1,
        1,
      ),
    );
  } else if (typeof rawDescription !== "string") {
    warnings.push(
      warn(
        "SKILL_BAD_DESCRIPTION",
        `description must be a string, got ${kindOf(rawDescription)}`,
        ...valueAt("description"),
      ),
    );
  } else {
    description = oneLineDescription(rawDescription);
    const length = codePointLength(description);
    if (length === 0) {
      warnings.push(
        warn(
          "SKILL_BAD_DESCRIPTION",
          "description is empty; say what the skill does and when to use it",
          ...valueAt("description"),
        ),
      );
    } else if (length > MAX_SKILL_DESCRIPTION_LENGTH) {
      warnings.push(
        warn(
          "SKILL_BAD_DESCRIPTION",
          `description is ${length} characters, over the limit of ${MAX_SKILL_DESCRIPTION_LENGTH}; shorten it and move the detail into the body`,
          ...valueAt("description"),
        ),
      );
    } else if (CONTROL.test(description)) {
      warnings.push(
        warn(
          "SKILL_BAD_DESCRIPTION",
          "description contains control characters; remove them",
          ...valueAt("description"),
        ),
      );
    }
  }

  let hidden = false;
  for (const key of HIDING_KEYS) {
    if (!Object.hasOwn(fields, key)) continue;
    const flag = fields[key];
    if (typeof flag === "boolean") hidden ||= flag;
    else warnings.push(warn("SKILL_BAD_FIELD", `${key} must be true or false, got ${kindOf(flag)}`, ...valueAt(key)));
  }

  if (warnings.length > 0) return { ok: false, warnings };
  return { ok: true, skill: { name: name as string, description, hidden, body: text.slice(bodyStart) } };
}

/**
 * The commonest frontmatter mistake is a plain value holding ": " (`description: Deploys: the
 * app`), which YAML reads as a nested mapping: say how to quote it.
 */
function quoteHint(yamlText: string, offset: number | undefined): string {
  if (offset === undefined) return "";
  const start = yamlText.lastIndexOf("\n", offset - 1) + 1;
  const end = yamlText.indexOf("\n", offset);
  const line = yamlText.slice(start, end === -1 ? undefined : end).replace(/\r$/, "");
  const match = /^([A-Za-z0-9_-]+):[ \t]+([^"'|>\s].*?:(?:[ \t].*)?)[ \t]*$/.exec(line);
  if (match === null) return "";
  return `; a value containing ": " must be quoted: ${match[1]}: ${JSON.stringify(match[2])}`;
}

function frontmatterDetail(detail: string): string {
  return detail.replaceAll("in a manifest", "in SKILL.md frontmatter").replaceAll("a manifest", "SKILL.md frontmatter");
}

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a mapping";
  return `${typeof value === "string" ? "a string" : typeof value === "number" ? "a number" : `a ${typeof value}`} (${clip(String(value))})`;
}

function clip(text: string): string {
  const points = Array.from(text);
  return points.length <= 80 ? text : `${points.slice(0, 80).join("")}…`;
}

/** The directory name as a suggestion, only when it would itself be valid. */
function safeName(dirName: string): string {
  return isValidSkillName(dirName) ? dirName : "<name>";
}

const SURROGATE = /[\ud800-\udfff]/;

/** Code points of `text`: its length, unless it has surrogates (then counted one by one). */
function codePointLength(text: string): number {
  if (!SURROGATE.test(text)) return text.length;
  let n = 0;
  for (const _ of text) n += 1;
  return n;
}

import { hasBrand, InsomniaError } from "@insomnia/errors";

/** Every reason a skill is left out of the catalog, or cannot be loaded. */
export type SkillsErrorCode =
  | "SKILL_NO_FRONTMATTER"
  | "SKILL_BAD_FRONTMATTER"
  | "SKILL_BAD_NAME"
  | "SKILL_NAME_MISMATCH"
  | "SKILL_BAD_DESCRIPTION"
  | "SKILL_BAD_FIELD"
  | "SKILL_TOO_LARGE"
  | "SKILL_NOT_UTF8"
  | "SKILL_OUTSIDE_ROOT"
  | "SKILL_OUTSIDE_SCOPE"
  | "SKILL_NOT_A_FILE"
  | "SKILL_UNREADABLE"
  | "SKILLS_ROOT_OUTSIDE_SCOPE"
  | "SKILLS_ROOT_UNREADABLE"
  | "SKILLS_TOO_MANY_DIRS"
  | "SKILLS_TOO_DEEP"
  | "SKILL_UNKNOWN"
  | "INVALID_ARGUMENT";

/** A skill that cannot be loaded (thrown by {@link readSkillBody} and the `load_skill` tool). */
export class SkillsError extends InsomniaError<SkillsErrorCode> {
  static readonly brand: unique symbol = Symbol.for("insomnia.skills.error");
  override readonly name = "SkillsError";

  /** True for a SkillsError from any installed copy of this package. */
  static is(value: unknown): value is SkillsError {
    return hasBrand(value, SkillsError.brand);
  }
}

/**
 * Something wrong with one skill or one root, found while building the catalog. The skill
 * (or the rest of the root) is left out; everything else is kept.
 */
export interface SkillWarning {
  readonly code: SkillsErrorCode;
  /** What is wrong and what to do, without the location prefix. */
  readonly message: string;
  /** The file or directory the warning is about (as found, or its real path when that is the point). */
  readonly file?: string;
  /** 1-based line in `file`. */
  readonly line?: number;
  /** 1-based column in `file`. */
  readonly column?: number;
}

/** The warning of an error: the same code, detail and location. */
export function warningOf(error: SkillsError): SkillWarning {
  return {
    code: error.code,
    message: error.detail,
    ...(error.file === undefined ? {} : { file: error.file }),
    ...(error.line === undefined ? {} : { line: error.line }),
    ...(error.column === undefined ? {} : { column: error.column }),
  };
}

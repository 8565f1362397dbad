export {
  discoverSkills,
  MAX_SKILL_DEPTH,
  MAX_SKILL_DIRS,
  SKILL_FILE,
  type DiscoverSkillsOptions,
  type ShadowedSkill,
  type Skill,
  type SkillCatalog,
} from "./discover-skills.ts";
export {
  createLoadSkillTool,
  LOAD_SKILL_TOOL,
  readSkillBody,
  type LoadableSkill,
  type LoadSkillOptions,
  type LoadSkillTool,
} from "./load-skill.ts";
export {
  HIDING_KEYS,
  isValidSkillName,
  MAX_SKILL_DESCRIPTION_LENGTH,
  MAX_SKILL_NAME_LENGTH,
  oneLineDescription,
  parseSkill,
  type ParsedSkill,
  type ParseSkillResult,
} from "./parse-skill.ts";
export {
  MAX_SKILL_FILE_BYTES,
  readSkillFile,
  type IsReadable,
  type SkillFile,
  type SkillFileRules,
} from "./read-skill-file.ts";
export {
  SKILL_ROOT_KINDS,
  skillRoots,
  type SkillRoot,
  type SkillRootKind,
  type SkillRootsOptions,
} from "./skill-roots.ts";
export { SkillsError, type SkillsErrorCode, type SkillWarning } from "./skills-error.ts";

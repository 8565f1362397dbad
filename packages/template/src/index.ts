export {
  SystemPromptError,
  type SystemPromptErrorCode,
  type SystemPromptErrorOptions,
  type SystemPromptErrorPhase,
} from "./system-prompt-error.ts";
export {
  DEFAULT_LIMITS,
  SystemPromptTemplate,
  type ParseOptions,
  type RenderOptions,
  type TemplateLoader,
  type TemplateSource,
} from "./system-prompt-template.ts";
export type { RenderContext, ScopeData } from "./render-data.ts";
export {
  assembleSystemPrompt,
  assembleSystemPromptWithSections,
  type PromptSections,
  type PromptSpan,
  type SystemPromptParts,
} from "./trailing-section.ts";
export {
  budgetNotice,
  formatSkillsSection,
  MIN_SHORTENED_DESCRIPTION,
  SKILLS_INTRO,
  type ListedSkill,
  type SkillListing,
  type SkillsSection,
} from "./skills-section.ts";
export { TEMPLATE_HELPERS, TEMPLATE_VARIABLES } from "./template-variables.ts";
export { clearTemplateCache, templateCacheStats, type TemplateCacheStats } from "./template-cache.ts";

/** The AI SDK's global warning switch, as `ai` reads it: `false`, a logger function, or unset (print). */
type WarningLogger = (options: { warnings: readonly unknown[]; provider: string; model: string }) => void;
const globals = globalThis as { AI_SDK_LOG_WARNINGS?: WarningLogger | false | undefined };

/**
 * This package never prints (it no longer runs `ai`'s generateText, which did). For an application
 * that also calls `ai` itself, an unset `globalThis.AI_SDK_LOG_WARNINGS` is still set to `false`,
 * as before, and an application's own setting is kept.
 */
export function quietSdkWarnings(): void {
  if (globals.AI_SDK_LOG_WARNINGS === undefined) globals.AI_SDK_LOG_WARNINGS = false;
}

/** Hands a call's warnings to the application's `AI_SDK_LOG_WARNINGS` logger when it set one, as `ai` does. */
export function logSdkWarnings(warnings: readonly unknown[], provider: string, model: string): void {
  const logger = globals.AI_SDK_LOG_WARNINGS;
  if (warnings.length > 0 && typeof logger === "function") logger({ warnings, provider, model });
}

/** The AI SDK's global warning switch, as `ai` reads it: `false`, a logger function, or unset (print). */
type WarningLogger = (options: { warnings: readonly unknown[]; provider: string; model: string }) => void;
const globals = globalThis as { AI_SDK_LOG_WARNINGS?: WarningLogger | false | undefined };

/**
 * This package never prints, and `ai` prints a call's warnings unless told not to: an unset
 * `globalThis.AI_SDK_LOG_WARNINGS` is set to `false` (the warnings still reach `onWarning`); an
 * application's own setting (a logger, or `false`) is kept and `ai` honours it.
 */
export function quietSdkWarnings(): void {
  if (globals.AI_SDK_LOG_WARNINGS === undefined) globals.AI_SDK_LOG_WARNINGS = false;
}

/** Hands a completed call's warnings to the application's `AI_SDK_LOG_WARNINGS` logger when it set one, as `ai` does for a streamed one. */
export function logSdkWarnings(warnings: readonly unknown[], provider: string, model: string): void {
  const logger = globals.AI_SDK_LOG_WARNINGS;
  if (warnings.length > 0 && typeof logger === "function") logger({ warnings, provider, model });
}

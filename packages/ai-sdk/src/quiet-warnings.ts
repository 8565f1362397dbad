/**
 * Keeps the AI SDK's console warnings off the terminal (a library never prints), unless the
 * application chose a setting of its own: only an unset `globalThis.AI_SDK_LOG_WARNINGS` is changed.
 */
export function quietSdkWarnings(): void {
  if (globalThis.AI_SDK_LOG_WARNINGS === undefined) globalThis.AI_SDK_LOG_WARNINGS = false;
}

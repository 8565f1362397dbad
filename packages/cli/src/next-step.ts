/**
 * What the `pod` user can do about a library's warning or error, which the library cannot say
 * (it knows no `pod` commands): added to the message where pod prints it.
 */
const NEXT_STEP: Readonly<Record<string, string>> = {
  SOURCES_CHANGED:
    "this conversation keeps the prompt it started with; pod run --new starts one with the changed files",
  SEGMENT_CORRUPT: "pod run --new starts a new conversation (the damaged log is kept as it is)",
};

/** `message` with the pod command that helps with `code`, if there is one. */
export function withNextStep(code: string, message: string): string {
  const step = NEXT_STEP[code];
  return step === undefined || message.includes(step) ? message : `${message.replace(/[.;\s]+$/, "")}; ${step}`;
}

/** The human text of anything thrown: an Error's message, otherwise its string form. Never throws. */
export function errorText(error: unknown): string {
  try {
    if (typeof error === "object" && error !== null) {
      const message = (error as { message?: unknown }).message;
      if (typeof message === "string") return message;
    }
    return String(error);
  } catch {
    // A hostile value: a throwing `message` getter, toString or Symbol.toPrimitive.
    return "unprintable error";
  }
}

/** The human text of anything thrown: an Error's message, otherwise its string form. */
export function errorText(error: unknown): string {
  if (typeof error === "object" && error !== null && typeof (error as { message?: unknown }).message === "string") {
    return (error as { message: string }).message;
  }
  try {
    return String(error);
  } catch {
    return "unprintable error";
  }
}

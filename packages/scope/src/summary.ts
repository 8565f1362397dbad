/** One line of a summary list. */
export interface SummaryEntry {
  readonly path: string;
  readonly recursive: boolean;
}

/** The text shown to the model: `Readable:` and `Writable:` lists, `[non-recursive]` marked. */
export function formatSummary(readable: readonly SummaryEntry[], writable: readonly SummaryEntry[]): string {
  return [...section("Readable:", readable), ...section("Writable:", writable)].join("\n");
}

function section(header: string, entries: readonly SummaryEntry[]): string[] {
  if (entries.length === 0) return [header, "  (none)"];
  return [header, ...entries.map((e) => `  - ${e.path}${e.recursive ? "" : " [non-recursive]"}`)];
}

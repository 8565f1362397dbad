import type { CompactionReport, UsageTotals } from "@insomnia/pod";
import { usageLine } from "./run-report.ts";

const WHY: Readonly<Record<CompactionReport["reason"], string>> = {
  threshold: "the last call reached worker.compact_at of the context window",
  overflow: "the provider said the prompt is too long",
  manual: "asked for",
};

/** One line saying what a compaction did and what its summary call used (`summary` totals that one call). */
export function compactionLine(report: CompactionReport, summary: UsageTotals): string {
  const usage = `summary call: ${usageLine(summary)}`;
  if (report.outcome === "applied") {
    return `compacted (${WHY[report.reason]}): segment ${report.previousSegment} continues in ${report.segmentId}; ${usage}`;
  }
  return `compaction ${report.outcome} (${report.message ?? "not applied"}); ${usage}`;
}

import type { UsageTotals } from "@insomnia/pod";
import type { Message } from "@insomnia/worker";
import type { CliIo } from "./io.ts";
import { withNextStep } from "./next-step.ts";
import { formatProblemLine } from "./output.ts";
import { redacted, visibleControls } from "./shown-text.ts";
import type { Style } from "./output.ts";

const MAX_SHOWN = 200;

/** Model text on one line, secrets redacted and control characters visible (the model chose it). */
function oneLine(text: string): string {
  const line = visibleControls(redacted(text).replace(/\s+/g, " ").trim());
  return line.length > MAX_SHOWN ? `${line.slice(0, MAX_SHOWN)}…` : line;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The stderr line for a message the worker appended: tool calls and failed tool results. */
export function activityLines(message: Message, style: Style): string[] {
  if (message.role === "assistant") {
    return (message.toolCalls ?? []).map(
      (call) => `pod: ${style.bold("tool")} ${oneLine(call.name)} ${oneLine(json(call.input))}\n`,
    );
  }
  if (message.role === "tool" && message.isError === true) {
    return [`pod: ${style.red("tool failed")} ${oneLine(message.name)}: ${oneLine(message.content)}\n`];
  }
  return [];
}

/** The share of input tokens read from the cache, as a whole percentage (undefined without input). */
export function cacheShare(totals: Pick<UsageTotals, "inputTokens" | "cacheReadTokens">): number | undefined {
  return totals.inputTokens === 0 ? undefined : Math.round((100 * totals.cacheReadTokens) / totals.inputTokens);
}

/** `n` with a comma every three digits ("7,445"), without Intl: its number formatter takes ms to set up. */
export function count(n: number): string {
  const digits = String(Math.trunc(Math.abs(n)));
  const grouped = digits.replace(/\B(?=(\d{3})+$)/g, ",");
  return n < 0 ? `-${grouped}` : grouped;
}

/** USD for a person: cents once it is a dollar or more, else enough digits to see the amount. */
export function usd(cost: number): string {
  return `$${cost.toFixed(cost >= 1 || cost === 0 ? 2 : cost >= 0.01 ? 4 : 6)}`;
}

/** The cost of some calls: unknown when a price or usage is, with what is known of it. */
export function costText(totals: Pick<UsageTotals, "calls" | "costUsd" | "knownCostUsd" | "unpricedCalls">): string {
  if (totals.costUsd !== undefined) return usd(totals.costUsd);
  if (totals.unpricedCalls === totals.calls) return "cost unknown";
  return `cost unknown (${usd(totals.knownCostUsd)} for ${totals.calls - totals.unpricedCalls} of ${totals.calls} calls)`;
}

/** One line: model calls, input tokens with the cache-read share, cache writes, output tokens, cost. */
export function usageLine(totals: UsageTotals): string {
  const calls = `${totals.calls} model call${totals.calls === 1 ? "" : "s"}`;
  if (totals.reported === 0) return `${calls}, usage not reported`;
  const share = cacheShare(totals);
  return (
    `${calls}, ${count(totals.inputTokens)} input tokens ` +
    `(${count(totals.cacheReadTokens)} cache read${share === undefined ? "" : `, ${share}%`}; ${count(totals.cacheWriteTokens)} cache write), ` +
    `${count(totals.outputTokens)} output tokens, ${costText(totals)}`
  );
}

/** Writes a warning line to stderr in pod's format. */
export function writeWarning(
  io: CliIo,
  style: Style,
  warning: { code: string; message: string; file?: string | undefined },
): void {
  const problem = {
    code: warning.code,
    message: withNextStep(warning.code, warning.message),
    severity: "warning" as const,
    ...(warning.file === undefined ? {} : { file: warning.file }),
  };
  io.stderr.write(`pod: ${formatProblemLine(problem, style)}\n`);
}

import { loadManifest } from "@insomnia/manifest";
import type { PodManifest } from "@insomnia/manifest";
import type { CompactionMark, LedgerCall, LedgerSegment, SegmentRecord, UsageTotals } from "@insomnia/pod";
import type { Message } from "@insomnia/worker";
import type { LogOptions } from "../args.ts";
import { CliError } from "../cli-error.ts";
import type { CliIo } from "../io.ts";
import { manifestLoadOptions } from "../manifest-input.ts";
import { styleFor } from "../output.ts";
import { openPodStore, type PodStore } from "../pod-store.ts";
import { compactionMarkOf, conversationListText, findConversation, listConversations } from "../conversations.ts";
import { callJson, callLine, totalsJson } from "../ledger-view.ts";
import { usageLine, writeWarning } from "../run-report.ts";
import { forTerminal, redacted } from "../shown-text.ts";
import { resolveWorkspaceDir } from "../workspace-dir.ts";

interface SegmentView {
  id: string;
  createdAt: string;
  previousSegment?: string;
  summary?: string;
  messages: Message[];
  /** The compactions of this segment: each summary call (applied or not), where it was logged. */
  compactions: CompactionView[];
}

/** A compaction's summary call as the log shows it. */
interface CompactionView extends CompactionMark {
  /** Its position among the segment's records after segment_start (0-based). */
  index: number;
  /** The segment the conversation continued in, when the summary was applied. */
  continuedIn?: string;
  message: Message;
}

/** One user message and everything the model and tools answered to it. */
interface TurnView {
  segment: string;
  messages: Message[];
  usage: UsageTotals;
}

function turnsOf(
  segments: readonly SegmentView[],
  callOf: ReadonlyMap<Message, LedgerCall>,
  usageTotals: (calls: readonly LedgerCall[]) => UsageTotals,
): TurnView[] {
  const turns: TurnView[] = [];
  for (const segment of segments) {
    let current: Message[] | undefined;
    const flush = (): void => {
      if (current !== undefined && current.length > 0) {
        const calls = current.flatMap((m) => callOf.get(m) ?? []);
        turns.push({ segment: segment.id, messages: current, usage: usageTotals(calls) });
      }
    };
    for (const message of segment.messages) {
      if (message.role === "user" || current === undefined) {
        flush();
        current = [];
      }
      current.push(message);
    }
    flush();
  }
  return turns;
}

/**
 * `pod log`: the current conversation (the latest segment and those it continues), or the one
 * `<id>` names, with each turn's usage; `--list` lists them, `--prompt` prints one's stored prompt.
 */
export async function runLog(options: LogOptions, io: CliIo): Promise<number> {
  const cwd = await resolveWorkspaceDir(options.cwd, io.cwd);
  const { manifest } = await loadManifest(manifestLoadOptions(options, cwd, io));
  const opened = await openPodStore(options.store, manifest, io, { reader: true });
  try {
    return await printLog(opened, manifest, options, io);
  } finally {
    await opened.close?.();
  }
}

async function printLog(
  { store, location }: PodStore,
  manifest: PodManifest,
  options: LogOptions,
  io: CliIo,
): Promise<number> {
  const style = styleFor(io.stderr, io.env);
  const warn = (warning: { code: string; message: string; file?: string }): void => writeWarning(io, style, warning);
  const none = (): CliError =>
    new CliError("NO_CONVERSATION", `no conversation in ${location}; start one with pod run <message>`, {
      file: location,
    });
  if (options.list) {
    const conversations = await listConversations(store, warn);
    if (conversations.length === 0) throw none();
    io.stdout.write(
      options.json
        ? `${JSON.stringify({ store: location, conversations }, null, 2)}\n`
        : conversationListText(conversations),
    );
    return 0;
  }
  const latest =
    options.conversation === undefined
      ? await store.latestSegment()
      : (await findConversation(store, options.conversation, location, warn)).head;
  if (latest === undefined) throw none();
  if (options.prompt) {
    // The prompt that was really sent, as stored: nothing added, nothing escaped (as pod prompt prints).
    const start = (await store.readSegment(latest)).records[0];
    if (start?.type !== "segment_start") throw none();
    io.stdout.write(start.systemPrompt);
    return 0;
  }
  const segments: SegmentView[] = [];
  const logged: LedgerSegment[] = [];
  const seen = new Set<string>();
  for (let id: string | undefined = latest; id !== undefined && !seen.has(id); ) {
    seen.add(id);
    const { records, warnings } = await store.readSegment(id);
    for (const warning of warnings) warn(warning);
    const start = records[0];
    if (start?.type !== "segment_start") break;
    logged.unshift({ id, previousSegment: start.previousSegment, records });
    segments.unshift({
      id,
      createdAt: start.createdAt,
      ...(start.previousSegment === undefined ? {} : { previousSegment: start.previousSegment }),
      ...(start.summary === undefined ? {} : { summary: start.summary }),
      messages: records
        .slice(1)
        .flatMap((r: SegmentRecord) =>
          r.type === "message" && compactionMarkOf(r) === undefined ? [r.message as Message] : [],
        ),
      compactions: records.slice(1).flatMap((r: SegmentRecord, index) => {
        const mark = compactionMarkOf(r);
        return mark === undefined || r.type !== "message" ? [] : [{ ...mark, index, message: r.message as Message }];
      }),
    });
    id = start.previousSegment;
    if (id !== undefined && !(await store.listSegments()).includes(id)) break;
  }
  // An applied compaction's conversation goes on in the segment that names this one as its previous.
  for (const [i, segment] of segments.entries()) {
    const applied = segment.compactions.findLast((c) => c.outcome === "applied");
    const next = segments[i + 1];
    if (applied !== undefined && next !== undefined) applied.continuedIn = next.id;
  }
  const { conversationLedger, usageTotals, PRICE_TABLE_DATE } = await import("@insomnia/pod");
  const calls = conversationLedger(logged, { model: manifest.provider?.model, pricing: manifest.provider?.pricing });
  const callOf = new Map<Message, LedgerCall>(calls.map((call) => [call.message, call]));
  const turns = turnsOf(segments, callOf, usageTotals);
  const total = usageTotals(calls);
  if (options.json) {
    const data = {
      store: location,
      conversation: segments[0]?.id ?? latest,
      segments: segments.map((segment) => ({
        ...segment,
        compactions: segment.compactions.map(({ message, ...compaction }) => {
          const call = callOf.get(message);
          return { ...compaction, summary: message.content, ...(call === undefined ? {} : { call: callJson(call) }) };
        }),
      })),
      turns: turns.map((turn) => ({ ...turn, usage: totalsJson(turn.usage) })),
      calls: calls.map(callJson),
      usage: totalsJson(total),
      pricesValidOn: PRICE_TABLE_DATE,
    };
    io.stdout.write(`${redacted(JSON.stringify(data, null, 2))}\n`);
    return 0;
  }
  const out = styleFor(io.stdout, io.env);
  // The model's and tools' text: secrets redacted, and on a terminal control characters shown (before our own colours).
  const show = (text: string): string => forTerminal(io.stdout, redacted(text));
  const lines: string[] = [];
  for (const segment of segments) {
    lines.push(
      out.bold(
        `segment ${segment.id}, started ${segment.createdAt}${segment.previousSegment === undefined ? "" : `, continues ${segment.previousSegment}`}`,
      ),
    );
    if (segment.summary !== undefined) lines.push(`  summary: ${show(segment.summary).replace(/\n/g, "\n    ")}`);
    for (const turn of turns.filter((t) => t.segment === segment.id)) {
      for (const message of turn.messages) {
        lines.push(...messageLines(message).map(show));
        const call = callOf.get(message);
        if (call !== undefined) lines.push(`  ${out.yellow(callLine(call))}`);
      }
      // A message that got no answer (a provider error, Ctrl-C) made no model call to count.
      // A message whose turn was compacted before its answer goes on in the next segment (kept there).
      const continued = segment.compactions.find((c) => c.outcome === "applied")?.continuedIn;
      const unanswered =
        continued === undefined
          ? "no answer yet (pod resume retries it)"
          : `answered after the compaction, in segment ${continued}`;
      lines.push(`  ${out.yellow(turn.usage.calls === 0 ? unanswered : `usage: ${usageLine(turn.usage)}`)}`);
    }
    for (const compaction of segment.compactions) {
      const call = callOf.get(compaction.message);
      lines.push(out.bold(`  ${compactionText(compaction)}`));
      if (call !== undefined) {
        lines.push(`  ${out.yellow(callLine(call))}`);
        lines.push(`  ${out.yellow(`summary call usage: ${usageLine(usageTotals([call]))}`)}`);
      }
    }
  }
  lines.push(out.bold(`total: ${usageLine(total)}`));
  io.stdout.write(`${lines.join("\n")}\n`);
  return 0;
}

/** Why a compaction ran, in the words `pod log` shows for each `reason` the pod records. */
const REASONS: Readonly<Record<string, string>> = {
  threshold: "the last call reached worker.compact_at of the context window",
  overflow: "the provider said the prompt was too long",
  manual: "pod compact",
};

function compactionText(compaction: CompactionView): string {
  const why = REASONS[compaction.reason] ?? compaction.reason;
  const size =
    compaction.estimatedTokens === undefined
      ? ""
      : `, new segment about ${compaction.estimatedTokens} tokens${compaction.thresholdTokens === undefined ? "" : ` (threshold ${compaction.thresholdTokens})`}`;
  const outcome =
    compaction.outcome === "applied"
      ? `applied${compaction.continuedIn === undefined ? "" : `, continues in segment ${compaction.continuedIn}`}`
      : `${compaction.outcome}, not applied`;
  const leftOut = compaction.toolOutputsLeftOut === true ? ", oldest tool outputs left out of the request" : "";
  return `compaction (${why}): ${outcome}${size}${leftOut}`;
}

function indent(text: string, prefix: string): string {
  return `${prefix}${text.replace(/\n/g, `\n${" ".repeat(prefix.length)}`)}`;
}

function messageLines(message: Message): string[] {
  switch (message.role) {
    case "user":
      return [indent(message.content, "> ")];
    case "assistant": {
      const lines = message.content === "" ? [] : [indent(message.content, "< ")];
      for (const call of message.toolCalls ?? []) lines.push(`  tool ${call.name} ${JSON.stringify(call.input)}`);
      return lines;
    }
    case "tool": {
      const first = message.content.split("\n")[0] ?? "";
      const shown = first.length > 120 ? `${first.slice(0, 120)}…` : first;
      return [`  ${message.isError === true ? "tool failed" : "result"} ${message.name}: ${shown}`];
    }
  }
}

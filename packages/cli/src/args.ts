import { errorText } from "@insomnia/errors";
import { parseArgs } from "node:util";
import { CliError } from "./cli-error.ts";
import { parseRfc3339 } from "./rfc3339.ts";

import { COMMAND_NAMES, type CommandName } from "./command-names.ts";

export { COMMAND_NAMES, type CommandName };

interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
}

const GLOBAL_OPTIONS = {
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "V" },
} as const satisfies Record<string, OptionSpec>;

/** The flags each command accepts, as `node:util` parseArgs specs. */
export const COMMAND_OPTIONS = {
  prompt: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    tool: { type: "string", multiple: true },
    now: { type: "string" },
    explain: { type: "boolean" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  check: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  init: {
    cwd: { type: "string" },
    force: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  run: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    now: { type: "string" },
    store: { type: "string" },
    new: { type: "boolean" },
    image: { type: "string", multiple: true },
    reasoning: { type: "boolean" },
    conversation: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  resume: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    now: { type: "string" },
    store: { type: "string" },
    reasoning: { type: "boolean" },
    conversation: { type: "string" },
    help: { type: "boolean", short: "h" },
  },
  compact: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    now: { type: "string" },
    store: { type: "string" },
    conversation: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  log: {
    cwd: { type: "string" },
    manifest: { type: "string" },
    overlay: { type: "string", multiple: true },
    store: { type: "string" },
    json: { type: "boolean" },
    list: { type: "boolean" },
    prompt: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
  trust: {
    cwd: { type: "string" },
    list: { type: "boolean" },
    revoke: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
} as const satisfies Record<CommandName, Record<string, OptionSpec>>;

/** Where the manifest comes from: the flags shared by `prompt` and `check`. */
export interface ManifestOptions {
  /** Directory the pod would start in, as typed (relative to the process cwd). */
  cwd?: string;
  /** Replacement for `<cwd>/.insomnia/pod.yaml`, as typed. */
  manifest?: string;
  /** `--overlay` expressions, in order. */
  overlays: string[];
}

/** Options of `pod prompt`. */
export interface PromptOptions extends ManifestOptions {
  /** Tool names the template sees (`--tool`, repeatable); absent: the manifest's `worker.tools`. */
  tools?: string[];
  /** Fixed date and time (`--now`); the real clock when absent. */
  now?: Date;
  /** Print the source/section map instead of the prompt. */
  explain: boolean;
  /** Print everything as one JSON object. */
  json: boolean;
}

/** Options of `pod check`. */
export interface CheckOptions extends ManifestOptions {
  /** Print `{ ok, problems }` on stdout instead of lines on stderr. */
  json: boolean;
}

/** Where the pod's log is: the flags shared by `run`, `resume` and `log`. */
export interface StoreOptions extends ManifestOptions {
  /** `--store DIR|postgres://…` as typed (else INSOMNIA_STORE, else the default). */
  store?: string;
  /** `--conversation ID` (`pod log ID`): that conversation instead of the latest one. */
  conversation?: string;
}

/** Options of `pod run`. */
export interface RunOptions extends StoreOptions {
  /** The words of the message; empty means: read it from stdin. */
  input: string[];
  /** Start a new conversation instead of continuing the latest one. */
  new: boolean;
  /** Image files sent with the message (`--image FILE`, repeatable), as typed. */
  images: string[];
  /** Print the model's reasoning, dimmed, on stderr (`--reasoning`). */
  reasoning: boolean;
  /** Fixed date and time for the prompt and the log (`--now`). */
  now?: Date;
}

/** Options of `pod resume`. */
export interface ResumeOptions extends StoreOptions {
  /** Print the model's reasoning, dimmed, on stderr (`--reasoning`). */
  reasoning?: boolean;
  /** Fixed date and time for the log (`--now`). */
  now?: Date;
}

/** Options of `pod compact`. */
export interface CompactOptions extends StoreOptions {
  /** Print what the compaction did as one JSON object. */
  json: boolean;
  /** Fixed date and time stamped on the new segment (`--now`). */
  now?: Date;
}

/** Options of `pod log`. */
export interface LogOptions extends StoreOptions {
  /** Print the conversation as one JSON object. */
  json: boolean;
  /** List the conversations instead of showing one. */
  list: boolean;
  /** Print the conversation's stored system prompt, byte for byte. */
  prompt: boolean;
}

/** Options of `pod init`. */
export interface InitOptions {
  /** Directory to initialise, as typed (relative to the process cwd). */
  cwd?: string;
  /** Overwrite existing files. */
  force: boolean;
}

/** Options of `pod trust`. */
export interface TrustOptions {
  /** The workspace, as typed (relative to the process cwd). */
  cwd?: string;
  /** List the trusted workspaces instead. */
  list: boolean;
  /** Remove the workspace's trust record instead. */
  revoke: boolean;
}

/** What the command line asks for. */
export type Invocation =
  | { command: "help"; topic?: CommandName }
  | { command: "version" }
  | { command: "prompt"; options: PromptOptions }
  | { command: "check"; options: CheckOptions }
  | { command: "init"; options: InitOptions }
  | { command: "run"; options: RunOptions }
  | { command: "resume"; options: ResumeOptions }
  | { command: "compact"; options: CompactOptions }
  | { command: "log"; options: LogOptions }
  | { command: "trust"; options: TrustOptions };

function isCommandName(value: string): value is CommandName {
  return (COMMAND_NAMES as readonly string[]).includes(value);
}

/** Turns parseArgs' TypeError into a usage error that names the command's help. */
function strictParse<T extends Record<string, OptionSpec>>(args: readonly string[], options: T, helpHint: string) {
  try {
    return parseArgs({ args: [...args], options, strict: true, allowPositionals: true });
  } catch (error) {
    let message = errorText(error).replace(/\s*\n\s*/g, " ");
    // parseArgs explains "--" after an unknown option; for pod's flags that is noise.
    if ((error as { code?: unknown }).code === "ERR_PARSE_ARGS_UNKNOWN_OPTION")
      message = message.split(". ")[0] ?? message;
    throw new CliError("USAGE", `${message.replace(/\.$/, "")} (see '${helpHint}')`, { cause: error });
  }
}

function rejectPositionals(positionals: readonly string[], helpHint: string): void {
  const first = positionals[0];
  if (first !== undefined) throw new CliError("USAGE", `unexpected argument '${first}' (see '${helpHint}')`);
}

/** Path flags (--cwd, --manifest) given with an empty value would silently mean "."; refuse them. */
function rejectEmptyPaths(values: { cwd?: string | undefined; manifest?: string | undefined }, hint: string): void {
  for (const [flag, value] of [
    ["--cwd", values.cwd],
    ["--manifest", values.manifest],
  ] as const) {
    if (value === "") throw new CliError("USAGE", `${flag} needs a path, got an empty value (see '${hint}')`);
  }
}

function withDefined<T extends object>(base: T, extra: Record<string, unknown>): T {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [key, value] of Object.entries(extra)) if (value !== undefined) out[key] = value;
  return out as T;
}

function parseNow(value: string | undefined): Date | undefined {
  if (value === undefined) return undefined;
  const now = parseRfc3339(value);
  if (now === undefined) {
    throw new CliError("USAGE", `--now '${value}' is not an RFC 3339 date-time such as 2026-01-02T03:04:05Z`);
  }
  return now;
}

/** The options `run`, `resume` and `compact` share: which workspace, store and conversation. */
interface ConversationTargetValues {
  cwd?: string | undefined;
  manifest?: string | undefined;
  store?: string | undefined;
  now?: string | undefined;
  conversation?: string | undefined;
}

function rejectBadConversationTarget(values: ConversationTargetValues, hint: string): void {
  rejectEmptyPaths(values, hint);
  rejectEmptyStore(values.store, hint);
  rejectEmptyConversation(values.conversation, hint);
}

function conversationTarget(values: ConversationTargetValues) {
  return {
    cwd: values.cwd,
    manifest: values.manifest,
    store: values.store,
    now: parseNow(values.now),
    conversation: values.conversation,
  };
}

function rejectEmptyConversation(id: string | undefined, hint: string): void {
  if (id === "") throw new CliError("USAGE", `--conversation needs an id (pod log --list shows them) (see '${hint}')`);
}

function rejectEmptyStore(store: string | undefined, hint: string): void {
  if (store === "")
    throw new CliError("USAGE", `--store needs a directory or a postgres:// URL, got an empty value (see '${hint}')`);
}

/** Parses `pod`'s argv (without node and the script); throws CliError("USAGE") on wrong usage. */
export function parseInvocation(argv: readonly string[]): Invocation {
  const first = argv[0];
  if (first === undefined) throw new CliError("USAGE", "missing command (see 'pod --help')");
  if (first === "help") {
    const topic = argv[1];
    if (topic === undefined) return { command: "help" };
    if (!isCommandName(topic)) throw new CliError("USAGE", `unknown command '${topic}' (see 'pod --help')`);
    return { command: "help", topic };
  }
  if (first.startsWith("-")) {
    const { values, positionals } = strictParse(argv, GLOBAL_OPTIONS, "pod --help");
    rejectPositionals(positionals, "pod --help");
    if (values.help === true) return { command: "help" };
    if (values.version === true) return { command: "version" };
    throw new CliError("USAGE", "missing command (see 'pod --help')");
  }
  if (!isCommandName(first)) throw new CliError("USAGE", `unknown command '${first}' (see 'pod --help')`);

  const hint = `pod ${first} --help`;
  const rest = argv.slice(1);
  switch (first) {
    case "prompt": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.prompt, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectEmptyPaths(values, hint);
      if (values.explain === true && values.json === true) {
        throw new CliError("USAGE", `--explain and --json cannot be combined (see '${hint}')`);
      }
      const now = parseNow(values.now);
      for (const tool of values.tool ?? []) {
        if (tool.trim() === "" || tool !== tool.trim()) {
          throw new CliError("USAGE", `--tool '${tool}' is not a tool name (empty or surrounded by spaces)`);
        }
      }
      return {
        command: "prompt",
        options: withDefined<PromptOptions>(
          {
            overlays: values.overlay ?? [],
            explain: values.explain === true,
            json: values.json === true,
          },
          {
            cwd: values.cwd,
            manifest: values.manifest,
            now,
            tools: values.tool === undefined ? undefined : [...new Set(values.tool)],
          },
        ),
      };
    }
    case "check": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.check, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectEmptyPaths(values, hint);
      return {
        command: "check",
        options: withDefined<CheckOptions>(
          { overlays: values.overlay ?? [], json: values.json === true },
          { cwd: values.cwd, manifest: values.manifest },
        ),
      };
    }
    case "init": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.init, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectEmptyPaths(values, hint);
      return {
        command: "init",
        options: withDefined<InitOptions>({ force: values.force === true }, { cwd: values.cwd }),
      };
    }
    case "run": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.run, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectBadConversationTarget(values, hint);
      if (values.new === true && values.conversation !== undefined) {
        throw new CliError("USAGE", `--new and --conversation cannot be combined (see '${hint}')`);
      }
      return {
        command: "run",
        options: withDefined<RunOptions>(
          {
            overlays: values.overlay ?? [],
            input: positionals,
            new: values.new === true,
            images: values.image ?? [],
            reasoning: values.reasoning === true,
          },
          conversationTarget(values),
        ),
      };
    }
    case "resume": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.resume, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectBadConversationTarget(values, hint);
      return {
        command: "resume",
        options: withDefined<ResumeOptions>(
          { overlays: values.overlay ?? [], ...(values.reasoning === true ? { reasoning: true } : {}) },
          conversationTarget(values),
        ),
      };
    }
    case "compact": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.compact, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectBadConversationTarget(values, hint);
      return {
        command: "compact",
        options: withDefined<CompactOptions>(
          { overlays: values.overlay ?? [], json: values.json === true },
          conversationTarget(values),
        ),
      };
    }
    case "log": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.log, hint);
      if (values.help === true) return { command: "help", topic: first };
      // One optional positional: the conversation to show.
      rejectPositionals(positionals.slice(1), hint);
      const id = positionals[0];
      rejectEmptyPaths(values, hint);
      rejectEmptyStore(values.store, hint);
      rejectEmptyConversation(id, hint);
      const list = values.list === true;
      const prompt = values.prompt === true;
      if (list && (prompt || id !== undefined)) {
        throw new CliError("USAGE", `--list shows every conversation; it takes no id and no --prompt (see '${hint}')`);
      }
      if (prompt && values.json === true) {
        throw new CliError(
          "USAGE",
          `--prompt prints the stored prompt as it is; it cannot be combined with --json (see '${hint}')`,
        );
      }
      return {
        command: "log",
        options: withDefined<LogOptions>(
          { overlays: values.overlay ?? [], json: values.json === true, list, prompt },
          { cwd: values.cwd, manifest: values.manifest, store: values.store, conversation: id },
        ),
      };
    }
    case "trust": {
      const { values, positionals } = strictParse(rest, COMMAND_OPTIONS.trust, hint);
      if (values.help === true) return { command: "help", topic: first };
      rejectPositionals(positionals, hint);
      rejectEmptyPaths(values, hint);
      if (values.list === true && values.revoke === true) {
        throw new CliError("USAGE", `--list and --revoke cannot be combined (see '${hint}')`);
      }
      return {
        command: "trust",
        options: withDefined<TrustOptions>(
          { list: values.list === true, revoke: values.revoke === true },
          { cwd: values.cwd },
        ),
      };
    }
  }
}

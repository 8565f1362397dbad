import type { CommandName } from "./args.ts";

const MAIN_HELP = `Usage: pod <command> [flags]

Assembles and checks the system prompt of an insomnia pod, and runs the pod.

Commands:
  prompt   print the system prompt a pod started here would send
  check    load the manifest and parse the instruction with every include; report all problems
  init     create .insomnia/pod.yaml and .insomnia/prompts/instruction.md
  run      send a message to the pod's model; a second run continues the conversation
  resume   continue an interrupted turn (after a provider error or Ctrl-C)
  compact  compact the latest conversation now (a summary in a new segment, same prompt)
  log      show the conversation with each turn's token and cache figures
  trust    trust this workspace's .insomnia/pod.yaml (as it is now) to widen what the pod may do

Flags:
  -h, --help      show help (also: pod <command> --help, pod help <command>)
  -V, --version   print the version of pod

Exit status: 0 success, 1 a problem in your files, 2 wrong usage, 70 a bug in pod.
Colour only on a terminal; NO_COLOR set to a non-empty value turns it off (an empty one
does not: no-color.org), FORCE_COLOR (not 0 or false) turns it on.
`;

const MANIFEST_FLAGS = `  --cwd DIR          directory the pod starts in (default: the current directory);
                     .insomnia/ is looked for there and above it, up to the repository
                     root or below home; the directory holding it is the workspace
  --manifest FILE    use FILE instead of the workspace's .insomnia/pod.yaml
  --overlay EXPR     apply a manifest overlay, e.g. --overlay 'worker.instruction = "$user/foo"'
                     (repeatable; later overlays win)`;

const STORE_FLAGS = `  --store DIR|URL    where the log is kept: a directory holding one directory per pod
                     (default: INSOMNIA_STORE, else $XDG_STATE_HOME/insomnia/pods,
                     ~/.local/state/insomnia/pods when unset), or a postgres:// URL:
                     the log in PostgreSQL (tables made by the first pod run)`;

const RUN_FOOTER = `The model is the manifest's provider block (kind anthropic, openai or
openai-compatible; model; base_url; api_key_file, else ANTHROPIC_API_KEY or
OPENAI_API_KEY). worker.max_tokens, max_turns and temperature reach the model.
Stdout gets the model's final text only; tool calls, warnings and a one-line usage
summary go to stderr. Exit status: 0 answered, 1 a problem in your files, provider or
key (the conversation is kept: pod resume retries), 2 wrong usage, 70 a bug in pod,
130 stopped by Ctrl-C (what was logged stays; pod resume continues).
`;

const COMMAND_HELP: Record<CommandName, string> = {
  prompt: `Usage: pod prompt [flags]

Prints, on stdout, the system prompt a pod started in the directory would send,
byte for byte (no newline is added).

Flags:
${MANIFEST_FLAGS}
  --tool NAME        a tool name the template sees in {{tools}} (repeatable; default: the
                     manifest's worker.tools)
  --now RFC3339      fix the date and time, e.g. --now 2026-01-02T03:04:05Z (default: the clock)
  --explain          print a map instead: source files, section sizes in bytes and
                     tokens (o200k_base), total, the skills (listed, hidden, left
                     out, shadowed) with their tokens, warnings
  --json             print the map and the prompt as one JSON object
  -h, --help         show this help

Warnings (e.g. a truncated AGENTS.md, a broken SKILL.md) go to stderr; --explain and
--json include them.
`,
  check: `Usage: pod check [flags]

Loads the manifest layers, parses the instruction with every include and reads the
skills, without rendering. Prints "ok: <instruction>, N source files[, M skills]" when
clean; otherwise every problem found as "file:line:col: CODE: message" on stderr, and
exits 1. A broken SKILL.md is a warning with its position (the pod leaves it out).

Also prints the workspace, the manifest in use, whether it is trusted and what
trusting it would grant. An untrusted manifest that widens what the pod may do is an
UNTRUSTED_WORKSPACE error at each such value (see pod trust).

Flags:
${MANIFEST_FLAGS}
  --json             print { ok, problems: [{ file, line, column, code, cause, message, severity }],
                     workspace: { root, manifest, trusted, grants: [{ key, grants, file, line, column }] } }
  -h, --help         show this help
`,
  init: `Usage: pod init [flags]

Creates .insomnia/pod.yaml (every key shown with its default) and
.insomnia/prompts/instruction.md (includes $insomnia/default). Refuses to overwrite
an existing file.

Flags:
  --cwd DIR          directory to initialise (default: the current directory)
  --force            overwrite existing files
  -h, --help         show this help
`,
  run: `Usage: pod run [flags] [message...]

Sends one user message (the words, or stdin when there are none) to the pod's model
and prints its answer as it arrives. A second pod run in the same workspace continues
the same conversation: restored from the log, its system prompt byte for byte as
stored, never re-rendered (a changed instruction file gives a SOURCES_CHANGED warning).
Ctrl-C stops the turn and keeps what had arrived (exit 130); a second Ctrl-C ends pod.

Flags:
${MANIFEST_FLAGS}
  --now RFC3339      fix the date and time rendered into a new prompt and stamped on the log
  --new              start a new conversation instead of continuing the latest one
  --conversation ID  continue that conversation instead (pod log --list shows the ids)
  --image FILE       send this image (png, jpeg, gif, webp; at most 5 MiB) with the message; repeatable
  --reasoning        print the model's reasoning, dimmed, on stderr
${STORE_FLAGS}
  -h, --help         show this help

${RUN_FOOTER}`,
  resume: `Usage: pod resume [flags]

Continues the latest conversation's interrupted turn: a message that got no answer
(a provider error, Ctrl-C) is sent again; tool calls that got no result are run; an
answer cut short by Ctrl-C is continued from where it stopped.
Does nothing when the last turn finished.

Flags:
${MANIFEST_FLAGS}
  --now RFC3339      fix the date and time stamped on the log
  --conversation ID  resume that conversation instead of the latest one
  --reasoning        print the model's reasoning, dimmed, on stderr
${STORE_FLAGS}
  -h, --help         show this help

${RUN_FOOTER}`,
  compact: `Usage: pod compact [flags]

Compacts the latest conversation now, the way pod run does on its own when a call
reaches worker.compact_at of the model's context window: the model summarizes the
conversation (worker.compact_instruction) from a request that starts with the previous
one, so it reads the provider's cache; a new segment starts with the same system prompt
and tools, then the summary. The summary call is logged and counted (pod log shows it).
A summary that would not bring the conversation under the threshold is not applied
(COMPACTION_INEFFECTIVE, exit 1); nothing is lost either way.

Flags:
${MANIFEST_FLAGS}
  --now RFC3339      fix the date and time stamped on the new segment
  --conversation ID  compact that conversation instead of the latest one
  --json             print what the compaction did as one JSON object
${STORE_FLAGS}
  -h, --help         show this help
`,
  log: `Usage: pod log [flags] [id]

Shows the latest conversation, or the one with that id (its segments, oldest first,
with compaction summaries): every message, tool call and result, each turn's token
usage and cache-read share, and the total.

Flags:
${MANIFEST_FLAGS}
${STORE_FLAGS}
  --list             list the conversations instead: id, start, messages, the first
                     message; * marks the one pod run continues
  --prompt           print the conversation's stored system prompt, byte for byte (what
                     was sent; pod prompt prints what a new one would get)
  --json             print { store, conversation, segments, turns, usage } as one JSON
                     object (with --list: { store, conversations })
  -h, --help         show this help
`,
  trust: `Usage: pod trust [flags]

A checkout's .insomnia/pod.yaml may only narrow what a pod can do until you trust it.
Untrusted, these are refused (UNTRUSTED_WORKSPACE) before anything is read, run or
sent: pod.pwd outside the workspace, scope.allow targets outside it, a provider.base_url
that is not this machine, a provider.api_key_file outside the workspace, mcp_servers,
worker.run_command.network: true or a timeout_ms above the default.

pod trust prints what the workspace's manifest grants and records the workspace's real
path with the SHA-256 of the manifest's text in $XDG_CONFIG_HOME/insomnia/trust/
(~/.config/insomnia/trust/). It asks nothing: running it is your decision, so read the
manifest first. Editing the manifest makes the workspace untrusted again until you
run pod trust again.

Flags:
  --cwd DIR          the workspace to trust (default: the current directory; .insomnia/ is
                     looked for there and above it)
  --list             list the trusted workspaces and whether each manifest is unchanged
  --revoke           remove the workspace's trust record
  -h, --help         show this help
`,
};

/** The help text of `pod`, or of one command. */
export function helpText(topic?: CommandName): string {
  return topic === undefined ? MAIN_HELP : COMMAND_HELP[topic];
}

import type { CommandName } from "./args.ts";

const MAIN_HELP = `Usage: pod <command> [flags]

Assembles and checks the system prompt of an insomnia pod.

Commands:
  prompt   print the system prompt a pod started here would send
  check    load the manifest and parse the instruction with every include; report all problems
  init     create .insomnia/pod.yaml and .insomnia/prompts/instruction.md

Flags:
  -h, --help      show help (also: pod <command> --help, pod help <command>)
  -V, --version   print the version of pod

Exit status: 0 success, 1 a problem in your files, 2 wrong usage, 70 a bug in pod.
Colour only on a terminal; NO_COLOR (any value) turns it off, FORCE_COLOR turns it on.
`;

const MANIFEST_FLAGS = `  --cwd DIR          directory the pod starts in (default: the current directory)
  --manifest FILE    use FILE instead of <cwd>/.insomnia/pod.yaml
  --overlay EXPR     apply a manifest overlay, e.g. --overlay 'worker.instruction = "$user/foo"'
                     (repeatable; later overlays win)`;

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
                     tokens (o200k_base), total, AGENTS.md warnings
  --json             print the map and the prompt as one JSON object
  -h, --help         show this help

Warnings (e.g. a truncated AGENTS.md) go to stderr; --explain and --json include them.
`,
  check: `Usage: pod check [flags]

Loads the manifest layers and parses the instruction with every include, without
rendering. Prints "ok: <instruction>, N source files" when clean; otherwise every
problem found as "file:line:col: CODE: message" on stderr, and exits 1.

Flags:
${MANIFEST_FLAGS}
  --json             print { ok, problems: [{ file, line, column, code, cause, message, severity }] } on stdout
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
};

/** The help text of `pod`, or of one command. */
export function helpText(topic?: CommandName): string {
  return topic === undefined ? MAIN_HELP : COMMAND_HELP[topic];
}

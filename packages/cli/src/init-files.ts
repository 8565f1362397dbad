import {
  DEFAULT_INSTRUCTION,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  DEFAULT_SKILLS_BUDGET,
  DEFAULT_TEMPERATURE,
  DEFAULT_WORKER_TOOLS,
  WORKER_TOOL_NAMES,
} from "@insomnia/manifest";
import { PROVIDER_KINDS } from "./provider-kind.ts";

/** Path of the manifest `pod init` writes, relative to the workspace. */
export const INIT_MANIFEST_PATH = ".insomnia/pod.yaml";
/** Path of the instruction `pod init` writes, relative to the workspace. */
export const INIT_INSTRUCTION_PATH = ".insomnia/prompts/instruction.md";
/** The reference of that instruction, which the manifest points at. */
export const INIT_INSTRUCTION_REF = "$workspace/instruction";

/** The tools a manifest may add to the default ones (run_command), as a trailing comment. */
function optionalTools(): string {
  const more = WORKER_TOOL_NAMES.filter((name) => !DEFAULT_WORKER_TOOLS.includes(name));
  return more.length === 0 ? "" : `   # also: ${more.join(", ")}`;
}

/** Text of the `.insomnia/pod.yaml` that `pod init` writes: every key, with its default. */
export function initManifestText(): string {
  return `# Pod manifest of this workspace. Every key is optional; a commented-out key
# shows its default. Layers, lowest first: $XDG_CONFIG_HOME/insomnia/pod.yaml
# (or ~/.config/insomnia/pod.yaml), this file (or pod --manifest FILE), then
# each --overlay 'key = value'. Check it with: pod check

# pod:
#   name: <basename of pwd>          # shown to you, not to the model
#   pwd: <directory pod started in>  # absolute path the pod works in

worker:
  # The instruction file, as a prompt reference: "$insomnia/<name>" (builtin),
  # "$user/<name>" (~/.config/insomnia/prompts/<name>.md) or "$workspace/<name>"
  # (.insomnia/prompts/<name>.md). Default: "${DEFAULT_INSTRUCTION}".
  instruction: "${INIT_INSTRUCTION_REF}"
  # max_tokens: ${DEFAULT_MAX_TOKENS}
  # max_turns: ${DEFAULT_MAX_TURNS}
  # temperature: ${DEFAULT_TEMPERATURE}   # 0 to 2
  # The tools the model gets (file tools bound to the scope below); [] for none.
  # tools: [${DEFAULT_WORKER_TOOLS.join(", ")}]${optionalTools()}

# Characters the prompt's Skills listing may take (SKILL.md files in
# .insomnia/skills, .agents/skills, ~/.agents/skills ...; see docs/skills.md).
# skills:
#   budget: ${DEFAULT_SKILLS_BUDGET}

# Paths the pod may read and write; relative targets are relative to pwd.
# Without any allow rule the pod may write to pwd (recursively). Deny rules
# cap what allow rules grant.
# scope:
#   allow:
#     - target: .
#       permission: write             # read | write
#       recursive: true               # false: the directory itself, not below it
#   deny: []

# The model to talk to (no default; kind and model are required when set).
# provider:
#   kind: anthropic                  # ${PROVIDER_KINDS.join(" | ")}
#   model: <model name>              # e.g. claude-sonnet-4-5
#   base_url: <url>
#   api_key_file: <path to a file holding the key>
`;
}

/** Text of the `.insomnia/prompts/instruction.md` that `pod init` writes. */
export function initInstructionText(): string {
  return `{{!--
  The instruction of pods started in this workspace: .insomnia/pod.yaml points
  worker.instruction at ${INIT_INSTRUCTION_REF}, which is this file.

  The last line includes the builtin instruction. Keep it and add your own text
  after it, or remove it and write your own from scratch. For example:

    ## This project
    - Run \`npm test\` before you report back.
    - Tools you have: {{join tools ", "}}. Today is {{date}}.

  Split long instructions into files next to this one and include them:
  {{> "review"}} includes .insomnia/prompts/review.md, and {{> "$user/style"}}
  includes ~/.config/insomnia/prompts/style.md. Variables: date, time,
  datetime, cwd, scope.readable, scope.writable, scope.summary, tools.
  Your working boundaries and AGENTS.md are appended after this file
  automatically; do not repeat them here. Check your changes with: pod check
--}}
{{> "${DEFAULT_INSTRUCTION}"}}
`;
}

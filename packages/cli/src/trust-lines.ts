import { formatLocation } from "./output.ts";
import { redacted, visibleControls } from "./shown-text.ts";

/** Whether the workspace is trusted and what trusting it grants, as `pod check --json` prints it. */
export interface WorkspaceTrust {
  root: string;
  /** The workspace layer in use (absolute), or null when there is none. */
  manifest: string | null;
  trusted: boolean;
  grants: { key: string; grants: string; file: string; line: number; column: number }[];
}

/** `workspace: … (trusted)` and what the layer grants beyond the workspace, one line each. */
export function trustLines(trust: WorkspaceTrust): string {
  const state = trust.trusted ? "trusted" : "not trusted";
  const grants = trust.grants.length === 0 ? "it grants nothing beyond the workspace" : "trusting it grants:";
  const lines = [`workspace: ${trust.root}, manifest ${trust.manifest ?? "none"}, ${state}; ${grants}`];
  for (const grant of trust.grants) lines.push(`  ${formatLocation(grant)}: ${grant.key} ${grant.grants}`);
  // Values and paths come from the checkout: shown, never run, by the terminal.
  return `${visibleControls(redacted(lines.join("\n")))}\n`;
}

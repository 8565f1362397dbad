import { redactSecrets } from "@insomnia/errors";
import type { OutputStream } from "./output.ts";

// The secrets this process holds (API keys it read); a CLI process runs one command, so one set.
const secrets = new Set<string>();

/** Registers a secret (an API key once read) so that no message or output of this process shows it. */
export function hideSecret(value: string | undefined): void {
  if (value !== undefined && value.trim() !== "") secrets.add(value.trim());
}

/**
 * Text as pod may show it anywhere (a message, a JSON output): URL user-info, `password`
 * parameters and pairs, and every registered secret replaced by `***`. Every message and JSON
 * output of pod goes through here.
 */
export function redacted(text: string): string {
  return redactSecrets(text, [...secrets]);
}

// C0 controls but tab and line feed, DEL, and the C1 controls (U+0080–U+009F).
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;

/**
 * `text` with each control character a model or a checkout put in it shown as a visible escape
 * (`\x1b`), the text around it kept: an escape sequence in a tool name or a path must not
 * move the cursor, recolour or retitle the user's terminal. Tabs and line feeds stay.
 */
export function visibleControls(text: string): string {
  return text.replace(CONTROL, (char) => `\\x${char.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** Text for `stream`: control characters made visible on a terminal, the bytes as they are on a pipe or file. */
export function forTerminal(stream: OutputStream, text: string): string {
  return stream.isTTY === true ? visibleControls(text) : text;
}

import { redacted, visibleControls } from "./shown-text.ts";

/** A stream `pod` writes to: process.stdout/stderr, or a collector in tests. */
export interface OutputStream {
  write(chunk: string): unknown;
  readonly isTTY?: boolean;
}

/** Colour functions for one stream; identity functions when colour is off. */
export interface Style {
  readonly enabled: boolean;
  red(text: string): string;
  yellow(text: string): string;
  bold(text: string): string;
  dim(text: string): string;
}

/** Where a problem is: `file:line:col`, `file:line`, `file`, or nothing. */
export interface Location {
  file?: string | undefined;
  line?: number | undefined;
  column?: number | undefined;
}

/**
 * Colour when the stream is a terminal, never with NO_COLOR set to anything non-empty
 * (https://no-color.org), and on demand with FORCE_COLOR (not "0"/"false") for non-terminals.
 */
export function colourEnabled(stream: OutputStream, env: Readonly<Record<string, string | undefined>>): boolean {
  if ((env.NO_COLOR ?? "") !== "") return false;
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== "") return force !== "0" && force !== "false";
  return stream.isTTY === true;
}

const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;
const plain = (text: string) => text;

const COLOURED: Style = { enabled: true, red: sgr(31, 39), yellow: sgr(33, 39), bold: sgr(1, 22), dim: sgr(2, 22) };
const PLAIN: Style = { enabled: false, red: plain, yellow: plain, bold: plain, dim: plain };

/**
 * The style for a stream under the colour rules of {@link colourEnabled}, decided when first
 * used: a command that prints no problem never asks whether stderr is a terminal.
 */
export function styleFor(stream: OutputStream, env: Readonly<Record<string, string | undefined>>): Style {
  let decided: Style | undefined;
  const style = (): Style => {
    decided ??= colourEnabled(stream, env) ? COLOURED : PLAIN;
    return decided;
  };
  return {
    get enabled() {
      return style().enabled;
    },
    red: (text) => style().red(text),
    yellow: (text) => style().yellow(text),
    bold: (text) => style().bold(text),
    dim: (text) => style().dim(text),
  };
}

/** `file:line:col` (parts that are known), or undefined when there is no file. */
export function formatLocation(location: Location): string | undefined {
  if (location.file === undefined || location.file === "") return undefined;
  let out = location.file;
  if (location.line !== undefined) {
    out += `:${location.line}`;
    if (location.column !== undefined) out += `:${location.column}`;
  }
  return out;
}

/** What {@link formatProblemLine} prints. */
export interface ProblemLine extends Location {
  code: string;
  /** The underlying error's code, shown as `[CODE] ` before the message. */
  cause?: string | undefined;
  message: string;
  severity?: "error" | "warning";
}

/**
 * `location: CODE: [CAUSE] message` with the code in red; the location and cause parts are left
 * out when unknown. Secrets are redacted and control characters (from a checkout's paths, a
 * model's tool names) made visible: every message pod prints goes through here.
 */
export function formatProblemLine(problem: ProblemLine, style: Style): string {
  const shown = (text: string) => visibleControls(redacted(text));
  const where = formatLocation(problem);
  const code = problem.severity === "warning" ? style.yellow(problem.code) : style.red(problem.code);
  const label = problem.severity === "warning" ? `${style.yellow("warning")}: ` : "";
  const cause = problem.cause === undefined ? "" : `[${shown(problem.cause)}] `;
  return `${where === undefined ? "" : `${shown(where)}: `}${label}${code}: ${cause}${shown(problem.message)}`;
}

import { PromptLoaderError } from "./prompt-loader-error.ts";

/**
 * The reference prefixes, each naming one root directory: the builtin prompts, the user's,
 * the workspace's, and `$app`, an application's own folder that only a library caller names
 * (`new PromptLoader({ appDir })`); the `pod` command never configures it.
 */
export type PromptPrefix = "$insomnia" | "$user" | "$workspace" | "$app";

/** All prefixes, in documentation order. */
export const PROMPT_PREFIXES: readonly PromptPrefix[] = ["$insomnia", "$user", "$workspace", "$app"];

/** A parsed, validated prompt reference. */
export interface PromptRef {
  readonly prefix: PromptPrefix;
  /** "/"-separated segments `[A-Za-z0-9][A-Za-z0-9_-]*`, no ".md": "common/header". */
  readonly path: string;
  /** `${prefix}/${path}`: "$insomnia/common/header". */
  readonly canonical: string;
}

/** Longest accepted reference, in UTF-16 code units (raw and resolved). */
export const MAX_REF_LENGTH = 512;
/** Most "/"-separated segments in a reference path. */
export const MAX_REF_SEGMENTS = 32;

const GRAMMAR =
  'Segments are [A-Za-z0-9][A-Za-z0-9_-]* separated by "/", after $insomnia/, $user/ or $workspace/ (the .md is implied)';

/** Parses a reference; an unqualified name resolves against `current`'s prefix and directory. */
export function parseRef(raw: string, current?: PromptRef): PromptRef {
  if (typeof raw !== "string") {
    throw new PromptLoaderError("INVALID_REF", `prompt reference must be a string, got ${typeof raw}`);
  }
  if (raw.length > MAX_REF_LENGTH) {
    throw invalid(raw, MAX_REF_LENGTH, `reference is ${raw.length} characters long; the limit is ${MAX_REF_LENGTH}`);
  }
  if (raw.startsWith("$")) {
    let end = 1;
    while (end < raw.length && isSegmentChar(raw.charCodeAt(end))) end++;
    const prefix = raw.slice(0, end);
    if (!isPrefix(prefix)) {
      const hint = PROMPT_PREFIXES.find((p) => p.toLowerCase() === prefix.toLowerCase());
      throw new PromptLoaderError(
        "UNKNOWN_PREFIX",
        `unknown prefix ${JSON.stringify(prefix)} in prompt reference ${show(raw)}; ` +
          (hint ? `did you mean ${hint}/? ` : "") +
          "use $insomnia/ (builtin), $user/ (your config dir) or $workspace/ (<cwd>/.insomnia/prompts)",
        { ref: raw, index: 0 },
      );
    }
    if (end === raw.length || (raw[end] === "/" && end + 1 === raw.length)) {
      throw invalid(raw, raw.length, `empty path after ${prefix}/; name a file, e.g. ${prefix}/default`);
    }
    if (raw[end] !== "/") {
      throw invalid(raw, end, `expected "/" after ${prefix}, found ${describeChar(raw, end)}`);
    }
    const segments = checkPath(raw, end + 1);
    return makeRef(prefix, segments);
  }
  if (raw.length === 0) throw invalid(raw, 0, "empty reference");
  const segments = checkPath(raw, 0);
  if (current === undefined) {
    throw new PromptLoaderError(
      "UNQUALIFIED_WITHOUT_CURRENT",
      `prompt reference ${show(raw)} has no prefix and there is no current file to resolve it against; ` +
        `write $insomnia/${raw}, $user/${raw} or $workspace/${raw}`,
      { ref: raw },
    );
  }
  const base = parseRef(`${current.prefix}/${current.path}`);
  const dir = base.path.split("/").slice(0, -1);
  const joined = [...dir, ...segments];
  const ref = makeRef(base.prefix, joined);
  if (joined.length > MAX_REF_SEGMENTS || ref.canonical.length > MAX_REF_LENGTH) {
    throw invalid(
      raw,
      0,
      `relative to ${base.canonical} it resolves to a reference over the limits (${MAX_REF_SEGMENTS} segments, ${MAX_REF_LENGTH} characters)`,
    );
  }
  return ref;
}

function makeRef(prefix: PromptPrefix, segments: readonly string[]): PromptRef {
  const path = segments.join("/");
  return { prefix, path, canonical: `${prefix}/${path}` };
}

/** Validates raw.slice(start) as a segment path, reporting the first bad character. */
function checkPath(raw: string, start: number): string[] {
  const segments: string[] = [];
  let segStart = start;
  for (let i = start; i <= raw.length; i++) {
    if (i < raw.length && raw[i] !== "/") continue;
    const seg = raw.slice(segStart, i);
    checkSegment(raw, seg, segStart, start, i === raw.length);
    segments.push(seg);
    if (segments.length > MAX_REF_SEGMENTS) {
      throw invalid(raw, segStart, `more than ${MAX_REF_SEGMENTS} path segments`);
    }
    segStart = i + 1;
  }
  return segments;
}

function checkSegment(raw: string, seg: string, at: number, pathStart: number, last: boolean): void {
  if (seg.length === 0) {
    if (at === pathStart && at === 0 && raw.length > 0) {
      throw invalid(raw, 0, "absolute paths are not allowed; a reference names a file below a prefix root");
    }
    if (at === raw.length) throw invalid(raw, at - 1, 'trailing "/" is not allowed; end with a file name');
    throw invalid(raw, at, 'empty path segment ("//") is not allowed');
  }
  if (seg === "." || seg === "..") {
    throw invalid(raw, at, `"${seg}" segments are not allowed; references name files below their prefix root only`);
  }
  for (let k = 0; k < seg.length; k++) {
    const code = seg.charCodeAt(k);
    if (k === 0 ? isAlnum(code) : isSegmentChar(code)) continue;
    const index = at + k;
    const ch = seg[k];
    if (ch === "." && last && seg.slice(k) === ".md" && k > 0) {
      throw invalid(raw, index, `drop the .md, it is implied (write ${show(raw.slice(0, index))})`);
    }
    if (ch === ":" && k === 1 && at === 0 && isAlpha(seg.charCodeAt(0))) {
      throw invalid(raw, index, "drive letters are not allowed; a reference names a file below a prefix root");
    }
    if (ch === "\\") throw invalid(raw, index, 'backslashes are not allowed; separate segments with "/"');
    if (ch === "\0") throw invalid(raw, index, "NUL characters are not allowed");
    if (ch === "~" && k === 0) throw invalid(raw, index, "home-relative paths (~) are not allowed; use $user/");
    if (code > 0x7f) throw invalid(raw, index, `non-ASCII character ${describeChar(raw, index)} is not allowed`);
    if (k === 0 && (ch === "_" || ch === "-")) {
      throw invalid(raw, index, `a segment must start with a letter or digit, not ${describeChar(raw, index)}`);
    }
    throw invalid(raw, index, `character ${describeChar(raw, index)} is not allowed`);
  }
}

function invalid(raw: string, index: number, what: string): PromptLoaderError {
  return new PromptLoaderError(
    "INVALID_REF",
    `invalid prompt reference ${show(raw)} at index ${index}: ${what}. ${GRAMMAR}.`,
    { ref: raw, index },
  );
}

function isPrefix(value: string): value is PromptPrefix {
  return (PROMPT_PREFIXES as readonly string[]).includes(value);
}

function isAlpha(code: number): boolean {
  return (code >= 0x41 && code <= 0x5a) || (code >= 0x61 && code <= 0x7a);
}

function isAlnum(code: number): boolean {
  return isAlpha(code) || (code >= 0x30 && code <= 0x39);
}

function isSegmentChar(code: number): boolean {
  return isAlnum(code) || code === 0x5f || code === 0x2d;
}

function describeChar(raw: string, index: number): string {
  const cp = raw.codePointAt(index) ?? 0;
  const hex = `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`;
  return cp >= 0x20 && cp !== 0x7f ? `${JSON.stringify(String.fromCodePoint(cp))} (${hex})` : hex;
}

/** Quotes a reference for a message, shortened so a huge input does not flood the log. */
function show(raw: string): string {
  return JSON.stringify(raw.length > 80 ? `${raw.slice(0, 77)}...` : raw);
}

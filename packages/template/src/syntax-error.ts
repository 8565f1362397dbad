import { errorText } from "@insomnia/errors";
import { handlebarsParser } from "./handlebars-parser.ts";
import { lexAll, type JisonLexer, type JisonParser, type Token } from "./handlebars-lexer.ts";
import { lexableText } from "./line-separators.ts";

/** Where a syntax error is and what to say about it. */
export interface SyntaxErrorInfo {
  /** 1-based. */
  line?: number;
  /** 1-based. */
  column?: number;
  message: string;
}

interface OpenBlock {
  name: string;
  tag: string;
  line: number;
  column: number;
}

const OPENERS = new Set(["OPEN_BLOCK", "OPEN_INVERSE", "OPEN_PARTIAL_BLOCK", "OPEN_RAW_BLOCK"]);

/**
 * Turns whatever Handlebars.parse threw into an exact position and a readable message.
 * Handlebars' own parse errors carry only a line; the position of the offending token
 * comes from re-running its lexer and parser on private instances.
 */
export function describeSyntaxError(text: string, error: unknown): SyntaxErrorInfo {
  const parser = handlebarsParser() as JisonParser;
  const lines = lineStarts(text);
  const { tokens, lexError } = lexAll(text);
  const blocks = scanBlocks(tokens, text, lines);
  const lexable = lexableText(text);
  const raw = lexable.restore(errorText(error));

  if (blocks.mismatch !== undefined) {
    const { open, close } = blocks.mismatch;
    return {
      line: close.line,
      column: close.column,
      message: `${close.tag} does not close ${open.tag} opened at ${open.line}:${open.column}; close it with {{/${open.name}}}`,
    };
  }
  if (blocks.stray !== undefined) {
    const { stray } = blocks;
    return { line: stray.line, column: stray.column, message: `${stray.tag} closes a block that was never opened` };
  }
  if (lexError !== undefined) {
    return { ...lexError, message: `unrecognized text: ${firstLine(raw)}; an unclosed comment or raw block?` };
  }
  const failure = diagnose(parser, lexable.text);
  if (failure !== undefined && failure.token === "EOF" && blocks.unclosed !== undefined) {
    const open = blocks.unclosed;
    return { line: open.line, column: open.column, message: `${open.tag} is never closed; add {{/${open.name}}}` };
  }
  if (failure !== undefined && failure.token === "INVALID") {
    const offset = offsetOf(lines, failure.line, failure.column - 1);
    const open = text.lastIndexOf("{{", offset);
    if (open !== -1 && !text.slice(offset).includes("}}")) {
      const line = lines.findLastIndex((start) => start <= open) + 1;
      return { line, column: open - (lines[line - 1] ?? 0) + 1, message: "this {{ is never closed; add }}" };
    }
  }
  if (failure !== undefined) {
    const found = failure.token === "EOF" ? "end of file" : JSON.stringify(lexable.restore(failure.text));
    const expected = describeExpected(failure.expected);
    return {
      line: failure.line,
      column: failure.column,
      message: `unexpected ${found}${expected === "" ? "" : ` (expected ${expected})`}`,
    };
  }
  const withLoc = error as { lineNumber?: unknown; column?: unknown };
  if (typeof withLoc.lineNumber === "number" && typeof withLoc.column === "number") {
    return { line: withLoc.lineNumber, column: withLoc.column + 1, message: raw.replace(/ - \d+:\d+$/, "") };
  }
  const lineMatch = /line (\d+)/.exec(raw);
  return lineMatch?.[1] !== undefined
    ? { line: Number(lineMatch[1]), message: firstLine(raw) }
    : { message: firstLine(raw) };
}

function firstLine(text: string): string {
  return text.split("\n", 1)[0] ?? text;
}

/**
 * Where each line starts, with the line breaks Handlebars' lexer counts (and editors show):
 * LF, CRLF and a lone CR. A custom loader may hand over text with CRs; counting only LF here
 * read names at the wrong offsets (`{{##if}} is never closed`).
 */
function lineStarts(text: string): number[] {
  const starts = [0];
  for (const match of text.matchAll(/\r\n?|\n/g)) starts.push(match.index + match[0].length);
  return starts;
}

function offsetOf(lines: readonly number[], line: number, column: number): number {
  return (lines[line - 1] ?? 0) + column;
}

interface BlockScan {
  mismatch?: { open: OpenBlock; close: OpenBlock };
  stray?: OpenBlock;
  unclosed?: OpenBlock;
}

function scanBlocks(tokens: readonly Token[], text: string, lines: readonly number[]): BlockScan {
  const stack: OpenBlock[] = [];
  for (const token of tokens) {
    const line = token.loc.first_line;
    const column = token.loc.first_column + 1;
    if (OPENERS.has(token.name)) {
      const name = nameAfter(text, offsetOf(lines, token.loc.last_line, token.loc.last_column));
      const tag = token.name === "OPEN_RAW_BLOCK" ? `{{{{${name}}}}}` : `${token.text.replace("~", "")}${name}}}`;
      stack.push({ name, tag, line, column });
    } else if (token.name === "OPEN_ENDBLOCK" || token.name === "END_RAW_BLOCK") {
      const name =
        token.name === "END_RAW_BLOCK"
          ? token.text
          : nameAfter(text, offsetOf(lines, token.loc.last_line, token.loc.last_column));
      const close = { name, tag: token.name === "END_RAW_BLOCK" ? `{{{{/${name}}}}}` : `{{/${name}}}`, line, column };
      const open = stack.pop();
      if (open === undefined) return { stray: close };
      if (open.name !== name) return { mismatch: { open, close } };
    }
  }
  const unclosed = stack.at(-1);
  return unclosed === undefined ? {} : { unclosed };
}

function nameAfter(text: string, offset: number): string {
  return /^\s*([^\s}~()|=]+)/.exec(text.slice(offset, offset + 200))?.[1] ?? "";
}

interface ParseFailure {
  token: string;
  text: string;
  expected: readonly string[];
  line: number;
  column: number;
}

function diagnose(parser: JisonParser, text: string): ParseFailure | undefined {
  const probe = Object.create(parser) as JisonParser;
  const lexer = Object.create(parser.lexer) as JisonLexer;
  probe.lexer = lexer;
  let failure: ParseFailure | undefined;
  probe.yy = {
    ...parser.yy,
    parseError(message: string, hash: { token?: unknown; text?: unknown; expected?: unknown }) {
      const at = lexer.yylloc;
      failure = {
        token: typeof hash.token === "string" ? hash.token : "INVALID",
        text: typeof hash.text === "string" ? hash.text : "",
        expected: Array.isArray(hash.expected) ? hash.expected.map(String) : [],
        line: at.first_line,
        column: at.first_column + 1,
      };
      throw new Error(message);
    },
  };
  try {
    probe.parse(text);
  } catch {
    // `failure` is set when the parser itself gave up; other throws carry their own location.
  }
  return failure;
}

const EXPECTED_NAMES: Readonly<Record<string, string>> = {
  "'ID'": "a name",
  "'STRING'": "a string",
  "'NUMBER'": "a number",
  "'DATA'": "an @variable",
  "'CLOSE'": "}}",
  "'CLOSE_UNESCAPED'": "}}}",
  "'CLOSE_RAW_BLOCK'": "}}}}",
  "'OPEN_ENDBLOCK'": "{{/…}}",
  "'INVERSE'": "{{else}}",
  "'OPEN_INVERSE_CHAIN'": "{{else …}}",
  "'EOF'": "end of file",
  "'CONTENT'": "text",
};

function describeExpected(expected: readonly string[]): string {
  const names: string[] = [];
  for (const token of expected) {
    const name = EXPECTED_NAMES[token];
    if (name !== undefined && !names.includes(name)) names.push(name);
  }
  return names.join(", ");
}

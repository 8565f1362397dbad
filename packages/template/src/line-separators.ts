/** Whitespace to Handlebars' lexer (`\s`), one UTF-16 code unit, and not a line terminator to `.`. */
const STAND_INS = [
  "\u00a0",
  "\u1680",
  "\u2000",
  "\u2001",
  "\u2002",
  "\u2003",
  "\u2004",
  "\u2005",
  "\u2006",
  "\u2007",
  "\u2008",
  "\u2009",
  "\u200a",
  "\u202f",
  "\u205f",
  "\u3000",
  "\ufeff",
];

/** Text for Handlebars' lexer, and how to turn a string taken from it back into the original characters. */
export interface LexableText {
  readonly text: string;
  /** The string with the original characters back (the identity when nothing was replaced). */
  restore(value: string): string;
}

const AS_IS: (value: string) => string = (value) => value;

/**
 * Handlebars' lexer (jison) computes a column after a token that spans a line break with
 * `.*`, which stops at U+2028 and U+2029: every later column on that line came out short
 * by the characters past the separator, while an editor shows them on one line. Each
 * separator is replaced by a whitespace character the text does not contain (whitespace
 * to the lexer as the separator is, one code unit as it is), so tokens, whitespace control
 * and positions are unchanged, and `restore` puts it back in strings taken from the text.
 */
export function lexableText(text: string): LexableText {
  const ls = text.indexOf("\u2028") !== -1;
  const ps = text.indexOf("\u2029") !== -1;
  if (!ls && !ps) return { text, restore: AS_IS };
  const free = STAND_INS.filter((c) => !text.includes(c));
  const [forLs, forPs] = free;
  // A text holding every stand-in is left as it is: only its columns can be off.
  if (forLs === undefined || forPs === undefined) return { text, restore: AS_IS };
  const replaced = text.replaceAll("\u2028", forLs).replaceAll("\u2029", forPs);
  return {
    text: replaced,
    restore: (value) =>
      value.includes(forLs) || value.includes(forPs)
        ? value.replaceAll(forLs, "\u2028").replaceAll(forPs, "\u2029")
        : value,
  };
}

/** Restores, in place, every string of a parsed AST (its `loc` objects hold none). */
export function restoreStrings(node: unknown, restore: (value: string) => string): void {
  if (restore === AS_IS || typeof node !== "object" || node === null) return;
  const record = node as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key === "loc") continue;
    const value = record[key];
    if (typeof value === "string") record[key] = restore(value);
    else if (typeof value === "object" && value !== null) restoreStrings(value, restore);
  }
}

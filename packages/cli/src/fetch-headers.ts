/*
 * A WHATWG `Headers` that does not load Node's built-in undici.
 *
 * In Node 20 the global `Headers` (like `fetch`, `Request` and `Response`) is undici's, and
 * touching it loads all of undici: about as long as starting Node itself (measured:
 * `node -e "new Headers()"` is 2x `node -e 0`). The providers' shared code builds a `Headers`
 * for every request, so the `pod` bin's vendor files get this class instead (the build
 * injects it for the global name; see tsup.config.ts), and `httpFetch` answers with it.
 * It follows the standard for everything the providers use: names are checked and
 * lower-cased, values trimmed and checked (no CR, LF or NUL: no header injection), entries
 * iterate sorted by name, `set-cookie` values stay apart.
 */

const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Leading and trailing HTTP whitespace: tab, LF, CR, space.
const EDGE_WHITESPACE = /^[\t\n\r ]+|[\t\n\r ]+$/g;
// CR, LF and NUL (header injection), and anything that is not a byte (a header value is a
// ByteString: the platform's Headers refuses U+0100 and above too).
const FORBIDDEN_IN_VALUE = /[\0\r\n\u0100-\uffff]/;

function headerName(name: unknown): string {
  const text = String(name);
  if (!TOKEN.test(text)) throw new TypeError(`Headers: invalid header name ${JSON.stringify(text)}`);
  return text.toLowerCase();
}

function headerValue(name: string, value: unknown): string {
  const text = String(value).replace(EDGE_WHITESPACE, "");
  if (FORBIDDEN_IN_VALUE.test(text)) {
    throw new TypeError(
      `Headers: invalid value for header ${JSON.stringify(name)} (CR, LF, NUL and characters above U+00FF are not allowed)`,
    );
  }
  return text;
}

export type FetchHeadersInit =
  | Iterable<readonly [string, string] | readonly string[]>
  | Record<string, string | readonly string[]>
  | { forEach(callback: (value: string, name: string) => void): void };

/** `Headers` as the Fetch standard has it, in plain JavaScript (see the top of this file). */
export class FetchHeaders {
  /** Lower-cased name → values in order (several only for `append` and `set-cookie`). */
  readonly #values = new Map<string, string[]>();

  constructor(init?: FetchHeadersInit | null) {
    if (init === undefined || init === null) return;
    if (typeof init !== "object" && typeof init !== "function") {
      throw new TypeError("Headers: the init must be an object, a sequence of pairs or a record");
    }
    if (Symbol.iterator in init) {
      for (const pair of init as Iterable<readonly string[]>) {
        const entry = Array.from(pair);
        if (entry.length !== 2) throw new TypeError("Headers: every init pair must have exactly a name and a value");
        this.append(entry[0]!, entry[1]!);
      }
      return;
    }
    for (const name of Object.keys(init)) this.append(name, (init as Record<string, string>)[name]!);
  }

  get [Symbol.toStringTag](): string {
    return "Headers";
  }

  /** A `Headers` of any implementation (this one, or the platform's) counts. */
  static [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && Object.prototype.toString.call(value) === "[object Headers]";
  }

  append(name: string, value: string): void {
    const key = headerName(name);
    const text = headerValue(key, value);
    const values = this.#values.get(key);
    if (values === undefined) this.#values.set(key, [text]);
    else values.push(text);
  }

  set(name: string, value: string): void {
    const key = headerName(name);
    this.#values.set(key, [headerValue(key, value)]);
  }

  delete(name: string): void {
    this.#values.delete(headerName(name));
  }

  has(name: string): boolean {
    return this.#values.has(headerName(name));
  }

  /** The values joined by ", ", or null when absent. */
  get(name: string): string | null {
    return this.#values.get(headerName(name))?.join(", ") ?? null;
  }

  getSetCookie(): string[] {
    return [...(this.#values.get("set-cookie") ?? [])];
  }

  *entries(): IterableIterator<[string, string]> {
    for (const key of [...this.#values.keys()].sort()) {
      const values = this.#values.get(key)!;
      if (key === "set-cookie") for (const value of values) yield [key, value];
      else yield [key, values.join(", ")];
    }
  }

  *keys(): IterableIterator<string> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): IterableIterator<string> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): IterableIterator<[string, string]> {
    return this.entries();
  }

  forEach(callback: (value: string, name: string, headers: FetchHeaders) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) callback.call(thisArg, value, key, this);
  }
}

import { SystemPromptError } from "./system-prompt-error.ts";

/** Caps of one render call. */
export interface BudgetLimits {
  readonly maxSteps: number;
  readonly maxOutputBytes: number;
}

/** Where a step or a chunk of output comes from. */
export interface BudgetSite {
  readonly ref: string;
  readonly line?: number | undefined;
  readonly column?: number | undefined;
}

/** Thrown by a budget counting code units when the output may be near the byte cap; the render is redone counting bytes. */
export const RECOUNT_IN_BYTES: unique symbol = Symbol("insomnia.template.recount-in-bytes");

/**
 * Counts the work of one render: steps (block helper calls, `#each` iterations, include
 * calls, `join` calls) and UTF-8 bytes of output. Output is counted as it is produced,
 * one piece of text or one printed value at a time, before it is appended to anything,
 * so a render over the cap stops after producing at most the cap plus one piece: no body
 * can grow past the cap (or past the longest string the engine can hold) before it is
 * looked at. A crossing is reported at the innermost block around the piece, or at the
 * include that brought the file in, or at the root file without a position.
 *
 * Counting the UTF-8 bytes of a printed value is a pass over the string, its code units
 * are its length; so a budget first counts UTF-16 code units: a string of n units has at
 * most 3n UTF-8 bytes, and while 3 × units stays within the cap the output cannot be
 * over it. Past that point it throws RECOUNT_IN_BYTES and the caller renders again with
 * a budget in byte mode, which counts exactly. Output that large is rare, and redoing it
 * at most doubles a render whose cost the caps bound anyway. Fixed text is measured in
 * both units when the file is compiled.
 */
export class RenderBudget {
  #steps = 0;
  /** Bytes (or code units, in unit mode) of the output produced so far. */
  #size = 0;
  #inBytes = false;
  #limits: BudgetLimits;
  readonly #stack: string[];
  /** Per entry of #stack: the include that entered that file (undefined for the root). */
  readonly #entered: (BudgetSite | undefined)[];
  readonly #rootRef: string;

  constructor(
    limits: BudgetLimits,
    rootRef: string,
    private readonly fileOf: (ref: string) => string | undefined,
  ) {
    this.#limits = limits;
    this.#rootRef = rootRef;
    this.#stack = [rootRef];
    this.#entered = [undefined];
  }

  /** Starts a new render: counters to zero, the root alone on the include stack. */
  reset(limits: BudgetLimits, inBytes: boolean): void {
    this.#limits = limits;
    this.#inBytes = inBytes;
    this.#steps = 0;
    this.#size = 0;
    // Includes pop themselves even when they throw, so this is normally already true.
    if (this.#stack.length !== 1 || this.#stack[0] !== this.#rootRef) {
      this.#stack.splice(0, this.#stack.length, this.#rootRef);
      this.#entered.splice(0, this.#entered.length, undefined);
    }
  }

  /** Canonical ref of the file being rendered right now. */
  get current(): string {
    return this.#stack.at(-1) ?? "";
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.#steps;
  }

  /** Output counted so far: UTF-8 bytes in byte mode, UTF-16 code units before. */
  get size(): number {
    return this.#size;
  }

  /** Counts one step at `site`. */
  step(site: BudgetSite): void {
    this.#steps++;
    if (this.#steps > this.#limits.maxSteps) {
      throw this.error(
        "RENDER_BUDGET_EXCEEDED",
        site,
        `rendering took more than ${this.#limits.maxSteps} steps (block helpers, #each iterations and includes); ` +
          "a loop nested in a loop or an include repeated inside includes multiplies the work — simplify the template",
      );
    }
  }

  /** Counts `out`, a value about to be printed inside `site` (undefined: at the top of the current file); returns it. */
  add(site: BudgetSite | undefined, out: string): string {
    if (!this.#inBytes) {
      this.#size += out.length;
      if (this.#size * 3 > this.#limits.maxOutputBytes) throw RECOUNT_IN_BYTES;
      return out;
    }
    this.#size += Buffer.byteLength(out, "utf8");
    this.checkBytes(site);
    return out;
  }

  /** Counts a fixed text whose sizes were measured when its file was compiled. */
  addMeasured(site: BudgetSite | undefined, units: number, bytes: number): void {
    if (!this.#inBytes) {
      this.#size += units;
      if (this.#size * 3 > this.#limits.maxOutputBytes) throw RECOUNT_IN_BYTES;
      return;
    }
    this.#size += bytes;
    this.checkBytes(site);
  }

  /**
   * Counts `copies` copies of `text` (an include's indentation, one per line) before they
   * are built, so an indented include over the cap stops here instead of after building a
   * string larger than the cap.
   */
  addCopies(site: BudgetSite, text: string, copies: number): void {
    const size = this.#inBytes ? Buffer.byteLength(text, "utf8") : text.length;
    this.#size += size * copies;
    if (!this.#inBytes) {
      if (this.#size * 3 > this.#limits.maxOutputBytes) throw RECOUNT_IN_BYTES;
      return;
    }
    this.checkBytes(site);
  }

  /** In byte mode: throws OUTPUT_TOO_LARGE when the output counted so far is over the cap. */
  private checkBytes(site: BudgetSite | undefined): void {
    if (this.#size > this.#limits.maxOutputBytes) {
      throw this.error(
        "OUTPUT_TOO_LARGE",
        site ?? this.#entered.at(-1) ?? { ref: this.#rootRef },
        `the rendered instruction is larger than ${this.#limits.maxOutputBytes} bytes (at least ${this.#size}); shorten the template or what it loops over`,
      );
    }
  }

  /** The include at `site` starts rendering `ref`: it goes on the include stack. Pair with `leave`, in a finally. */
  enter(ref: string, site: BudgetSite): void {
    this.#stack.push(ref);
    this.#entered.push(site);
  }

  /** The included file entered last has finished (or thrown). */
  leave(): void {
    this.#stack.pop();
    this.#entered.pop();
  }

  /** The include chain right now, root first. */
  chain(): readonly string[] {
    return [...this.#stack];
  }

  private error(
    code: "RENDER_BUDGET_EXCEEDED" | "OUTPUT_TOO_LARGE",
    site: BudgetSite,
    detail: string,
  ): SystemPromptError {
    const chain = this.chain();
    const at = chain.lastIndexOf(site.ref);
    return new SystemPromptError(code, detail, {
      ref: site.ref,
      file: this.fileOf(site.ref),
      line: site.line,
      column: site.column,
      chain: at === -1 ? chain : chain.slice(0, at + 1),
    });
  }
}

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

/**
 * Counts the work of one render: steps (block helper calls, `#each` iterations, include
 * calls) and UTF-8 bytes of output. It throws the moment a cap is crossed, from inside
 * the helper or include that crossed it, so a runaway template stops within a bounded
 * amount of work instead of after producing its whole output.
 */
export class RenderBudget {
  #steps = 0;
  /** Bytes of every finished chunk that is part of the output so far, each byte once. */
  #bytes = 0;
  readonly #stack: string[];

  constructor(
    private readonly limits: BudgetLimits,
    rootRef: string,
    private readonly fileOf: (ref: string) => string | undefined,
  ) {
    this.#stack = [rootRef];
  }

  /** Canonical ref of the file being rendered right now. */
  get current(): string {
    return this.#stack.at(-1) ?? "";
  }

  /** Steps taken so far. */
  get steps(): number {
    return this.#steps;
  }

  /** Counts one step at `site`. */
  step(site: BudgetSite): void {
    this.#steps++;
    if (this.#steps > this.limits.maxSteps) {
      throw this.error(
        "RENDER_BUDGET_EXCEEDED",
        site,
        `rendering took more than ${this.limits.maxSteps} steps (block helpers, #each iterations and includes); ` +
          "a loop nested in a loop or an include repeated inside includes multiplies the work — simplify the template",
      );
    }
  }

  /** Runs `render` and accounts for its output; nested measured chunks are not counted twice. */
  measure(site: BudgetSite, render: () => string): string {
    const before = this.#bytes;
    const out = render();
    this.#bytes = before + Buffer.byteLength(out, "utf8");
    if (this.#bytes > this.limits.maxOutputBytes) {
      throw this.error(
        "OUTPUT_TOO_LARGE",
        site,
        `the rendered instruction is larger than ${this.limits.maxOutputBytes} bytes (at least ${this.#bytes}); shorten the template or what it loops over`,
      );
    }
    return out;
  }

  /** Runs an included file's template with `ref` on the include stack. */
  within(ref: string, render: () => string): string {
    this.#stack.push(ref);
    try {
      return render();
    } finally {
      this.#stack.pop();
    }
  }

  /** The include chain right now, root first. */
  chain(): readonly string[] {
    return [...this.#stack];
  }

  private error(code: "RENDER_BUDGET_EXCEEDED" | "OUTPUT_TOO_LARGE", site: BudgetSite, detail: string): SystemPromptError {
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

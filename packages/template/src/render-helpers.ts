import { createFrame } from "./handlebars-env.ts";
import type { RenderBudget, BudgetSite } from "./render-budget.ts";
import { SystemPromptError } from "./system-prompt-error.ts";

interface HelperOptions {
  fn: (context: unknown, options?: { data?: unknown; blockParams?: unknown[] }) => string;
  inverse: (context: unknown) => string;
  data?: unknown;
  loc?: { start: { line: number; column: number } } | undefined;
}

type Helper = (this: unknown, ...args: unknown[]) => string;

function isEmpty(value: unknown): boolean {
  return !value || (Array.isArray(value) && value.length === 0);
}

/**
 * `list.map(String).join(separator)`. The lists in render data hold only strings and are
 * frozen, and V8's join of a frozen array takes a slow path that cost a fifth of a warm
 * render; concatenating is what join does, without it.
 */
function joinStrings(list: readonly unknown[], separator: string): string {
  let out = "";
  for (let i = 0; i < list.length; i++) {
    const item = list[i];
    if (typeof item !== "string") return list.map(String).join(separator);
    out = i === 0 ? item : out + separator + item;
  }
  return out;
}

function lastOptions(args: readonly unknown[]): HelperOptions {
  return args[args.length - 1] as HelperOptions;
}

/**
 * The helpers of one render call: `if`, `unless`, `each`, `with` behave like Handlebars'
 * own but count steps and output against `budget`; `join` joins a list. Every other
 * helper name throws, so nothing falls back to Handlebars' helperMissing behaviour.
 */
export function createRenderHelpers(budget: RenderBudget): Record<string, Helper> {
  const site = (options: HelperOptions): BudgetSite => ({
    ref: budget.current,
    line: options.loc?.start.line,
    column: options.loc === undefined ? undefined : options.loc.start.column + 1,
  });
  const conditional = (negate: boolean) =>
    function (this: unknown, value: unknown, options: HelperOptions): string {
      const at = site(options);
      budget.step(at);
      return budget.measure(at, () => (isEmpty(value) !== negate ? options.inverse(this) : options.fn(this)));
    };
  const missing = (name: string) => (): never => {
    throw new SystemPromptError("RENDER_FAILED", `"${name}" is not available in system prompt templates`, {
      ref: budget.current,
      chain: budget.chain(),
    });
  };
  return {
    if: conditional(false) as Helper,
    unless: conditional(true) as Helper,
    each: function (this: unknown, list: unknown, options: HelperOptions): string {
      const at = site(options);
      budget.step(at);
      if (!Array.isArray(list)) throw new TypeError("#each was given something that is not a list");
      if (list.length === 0) return budget.measure(at, () => options.inverse(this));
      return budget.measure(at, () => {
        const data = createFrame(options.data);
        let out = "";
        for (let index = 0; index < list.length; index++) {
          budget.step(at);
          const item: unknown = list[index];
          data["key"] = index;
          data["index"] = index;
          data["first"] = index === 0;
          data["last"] = index === list.length - 1;
          out += budget.measure(at, () => options.fn(item, { data, blockParams: [item, index] }));
        }
        return out;
      });
    } as Helper,
    with: function (this: unknown, value: unknown, options: HelperOptions): string {
      const at = site(options);
      budget.step(at);
      return budget.measure(at, () =>
        isEmpty(value) ? options.inverse(this) : options.fn(value, { data: options.data, blockParams: [value] }),
      );
    } as Helper,
    join: function (...args: unknown[]): string {
      const list = args[0];
      const separator = args.length === 3 ? String(args[1]) : ", ";
      if (!Array.isArray(list)) throw new TypeError("join was given something that is not a list");
      budget.step(site(lastOptions(args)));
      return joinStrings(list, separator);
    },
    helperMissing: missing("helperMissing"),
    blockHelperMissing: missing("blockHelperMissing"),
    log: missing("log"),
    lookup: missing("lookup"),
  };
}

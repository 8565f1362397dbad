import { SystemPromptError } from "./system-prompt-error.ts";

/** Scope information as plain values: what the pod may read and write, and its summary. */
export interface ScopeData {
  readonly readable: readonly string[];
  readonly writable: readonly string[];
  /** The scope's formatted summary (Readable:/Writable: lists); printed in the trailing section. */
  readonly summary: string;
}

/** Everything a render needs. */
export interface RenderContext {
  /** The moment the prompt is rendered; `date`, `time` and `datetime` are taken from it in UTC. */
  readonly now: Date;
  readonly cwd: string;
  readonly scope: ScopeData;
  /** Tool names; sorted again (a copy) before use. */
  readonly tools: readonly string[];
  /** AGENTS.md text, verbatim; never passed through the template engine. Absent: no AGENTS.md section. */
  readonly agentsMd?: string | undefined;
}

/** The frozen root context a template is rendered with. */
export interface RenderData {
  readonly date: string;
  readonly time: string;
  readonly datetime: string;
  readonly cwd: string;
  readonly scope: ScopeData;
  readonly tools: readonly string[];
}

function invalid(detail: string): never {
  throw new SystemPromptError("INVALID_CONTEXT", `invalid render context: ${detail}`);
}

function stringList(value: unknown, name: string): readonly string[] {
  if (!Array.isArray(value)) invalid(`${name} must be an array of strings`);
  const copy: string[] = [];
  for (const [i, item] of value.entries()) {
    if (typeof item !== "string") invalid(`${name}[${i}] must be a string, got ${typeof item}`);
    copy.push(item);
  }
  return copy;
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

/** Validates a render context and builds a fresh frozen root context from it. */
export function buildRenderData(ctx: RenderContext): RenderData {
  if (typeof ctx !== "object" || ctx === null) invalid("expected an object");
  const now: unknown = ctx.now;
  if (Object.prototype.toString.call(now) !== "[object Date]") invalid("now must be a Date");
  const time = (now as Date).getTime();
  if (!Number.isFinite(time)) invalid("now is an invalid Date");
  const d = now as Date;
  const year = d.getUTCFullYear();
  if (year < 0 || year > 9999) invalid(`now must be between years 0000 and 9999 (RFC 3339), got ${year}`);
  if (typeof ctx.cwd !== "string") invalid("cwd must be a string");
  const scope: unknown = ctx.scope;
  if (typeof scope !== "object" || scope === null) invalid("scope must be an object { readable, writable, summary }");
  const { readable, writable, summary } = scope as Record<string, unknown>;
  if (typeof summary !== "string") invalid("scope.summary must be a string");
  if (ctx.agentsMd !== undefined && typeof ctx.agentsMd !== "string") invalid("agentsMd must be a string or undefined");

  const date = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const clock = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return Object.freeze({
    date,
    time: clock,
    datetime: `${date}T${clock}Z`,
    cwd: ctx.cwd,
    scope: Object.freeze({
      readable: Object.freeze(stringList(readable, "scope.readable")),
      writable: Object.freeze(stringList(writable, "scope.writable")),
      summary,
    }),
    tools: Object.freeze([...stringList(ctx.tools, "tools")].sort()),
  });
}

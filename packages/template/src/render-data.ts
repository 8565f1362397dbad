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

/**
 * One list as last seen: the caller's array, a snapshot of its items (to notice it was
 * changed in place) and the frozen list handed to templates.
 */
interface ListMemo {
  source: unknown;
  snapshot: readonly string[];
  frozen: readonly string[];
}

/**
 * Validates a string list and returns its frozen (and, for tools, sorted) copy. When the
 * caller passes the same array with the same items as last time, the last copy is returned:
 * a render is usually given the same scope and tools again, and copying, checking, sorting
 * and freezing them would be repeated work on every render. Each item is read exactly once.
 */
function frozenList(value: unknown, name: string, memo: ListMemo | undefined, sort: boolean): ListMemo {
  if (!Array.isArray(value)) invalid(`${name} must be an array of strings`);
  const items = value as readonly unknown[];
  const length = items.length;
  const same = memo !== undefined && memo.source === value && memo.snapshot.length === length;
  let i = 0;
  if (same) {
    const snapshot = memo.snapshot;
    while (i < length && items[i] === snapshot[i]) i++;
    if (i === length) return memo;
  }
  const copy: string[] = same ? memo.snapshot.slice(0, i) : [];
  for (; i < length; i++) {
    const item: unknown = items[i];
    if (typeof item !== "string") invalid(`${name}[${i}] must be a string, got ${typeof item}`);
    copy.push(item);
  }
  Object.freeze(copy);
  return { source: value, snapshot: copy, frozen: sort ? Object.freeze([...copy].sort()) : copy };
}

function pad(value: number, width: number): string {
  return String(value).padStart(width, "0");
}

interface Clock {
  readonly ms: number;
  readonly date: string;
  readonly time: string;
  readonly datetime: string;
}

function formatClock(d: Date, ms: number, year: number): Clock {
  const date = `${pad(year, 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}`;
  const time = `${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}`;
  return { ms, date, time, datetime: `${date}T${time}Z` };
}

/**
 * The render data last built, with what it was built from: an equal context (same instant,
 * same strings, same arrays holding the same items) gets the same frozen object back;
 * anything else gets a new one. A render is usually given the same scope and tools again,
 * and copying, checking, sorting and freezing them again would be most of the work of a
 * warm render whose context did not change (bench/render.mjs measures the warm render). Each template's render state owns
 * one, so no state is shared between templates or kept at module level.
 */
export class RenderDataMemo {
  #now: unknown;
  #clock: Clock | undefined;
  #readable: ListMemo | undefined;
  #writable: ListMemo | undefined;
  #tools: ListMemo | undefined;
  #data: RenderData | undefined;

  /** Validates a render context and returns the frozen root context for it. */
  build(ctx: RenderContext): RenderData {
    if (typeof ctx !== "object" || ctx === null) invalid("expected an object");
    const now: unknown = ctx.now;
    // The same Date object as last time passed this check then, and stays a Date.
    if (now !== this.#now && Object.prototype.toString.call(now) !== "[object Date]") invalid("now must be a Date");
    const d = now as Date;
    const ms = d.getTime();
    if (!Number.isFinite(ms)) invalid("now is an invalid Date");
    let clock = this.#clock;
    if (clock === undefined || clock.ms !== ms) {
      const year = d.getUTCFullYear();
      if (year < 0 || year > 9999) invalid(`now must be between years 0000 and 9999 (RFC 3339), got ${year}`);
      clock = formatClock(d, ms, year);
    }
    const cwd: unknown = ctx.cwd;
    if (typeof cwd !== "string") invalid("cwd must be a string");
    const scope: unknown = ctx.scope;
    if (typeof scope !== "object" || scope === null) invalid("scope must be an object { readable, writable, summary }");
    const { readable, writable, summary } = scope as Record<string, unknown>;
    if (typeof summary !== "string") invalid("scope.summary must be a string");
    const agentsMd: unknown = ctx.agentsMd;
    if (agentsMd !== undefined && typeof agentsMd !== "string") invalid("agentsMd must be a string or undefined");

    const readableList = frozenList(readable, "scope.readable", this.#readable, false);
    const writableList = frozenList(writable, "scope.writable", this.#writable, false);
    const toolList = frozenList(ctx.tools, "tools", this.#tools, true);

    const last = this.#data;
    const sameScope =
      last !== undefined &&
      readableList === this.#readable &&
      writableList === this.#writable &&
      summary === last.scope.summary;
    let data: RenderData;
    if (sameScope && clock === this.#clock && cwd === last.cwd && toolList === this.#tools) {
      data = last;
    } else {
      data = Object.freeze({
        date: clock.date,
        time: clock.time,
        datetime: clock.datetime,
        cwd,
        scope: sameScope
          ? last.scope
          : Object.freeze({ readable: readableList.frozen, writable: writableList.frozen, summary }),
        tools: toolList.frozen,
      });
    }
    this.#now = now;
    this.#clock = clock;
    this.#readable = readableList;
    this.#writable = writableList;
    this.#tools = toolList;
    this.#data = data;
    return data;
  }
}

/** Validates a render context and returns a new frozen root context for it (nothing remembered). */
export function buildRenderData(ctx: RenderContext): RenderData {
  return new RenderDataMemo().build(ctx);
}

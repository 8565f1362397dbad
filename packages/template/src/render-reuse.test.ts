import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makePromptDirs, sampleContext, type PromptDirs } from "./__fixtures__/prompt-dirs.ts";
import { type RenderContext, RenderDataMemo } from "./render-data.ts";
import { SystemPromptError } from "./system-prompt-error.ts";
import { SystemPromptTemplate } from "./system-prompt-template.ts";

let p: PromptDirs;
beforeEach(() => {
  p = makePromptDirs();
});
afterEach(() => {
  p.cleanup();
});

function renderError(
  template: SystemPromptTemplate,
  ...args: Parameters<SystemPromptTemplate["renderInstruction"]>
): SystemPromptError {
  try {
    template.renderInstruction(...args);
  } catch (error) {
    if (SystemPromptError.is(error)) return error;
    throw error;
  }
  throw new Error("render did not fail");
}

/** What RenderDataMemo.build must return, computed from scratch with nothing remembered. */
function expectedData(ctx: RenderContext) {
  const iso = ctx.now.toISOString();
  return {
    date: iso.slice(0, 10),
    time: iso.slice(11, 19),
    datetime: `${iso.slice(0, 19)}Z`,
    cwd: ctx.cwd,
    scope: { readable: [...ctx.scope.readable], writable: [...ctx.scope.writable], summary: ctx.scope.summary },
    tools: [...ctx.tools].sort(),
  };
}

describe("render data is reused only when nothing changed", () => {
  it("an_equal_context_gets_the_same_frozen_data_and_any_change_a_new_one", () => {
    const memo = new RenderDataMemo();
    const tools = ["b", "a"];
    const ctx = sampleContext({ tools });
    const first = memo.build(ctx);
    expect(memo.build(ctx)).toBe(first);
    expect(memo.build({ ...ctx, scope: { ...ctx.scope } })).toBe(first);

    tools.push("c"); // changed in place: same array, new item
    const grown = memo.build(ctx);
    expect(grown).not.toBe(first);
    expect(grown.tools).toEqual(["a", "b", "c"]);
    expect(first.tools).toEqual(["a", "b"]);
    expect(grown.scope).toBe(first.scope);

    tools[0] = "z"; // same length, different item
    expect(memo.build(ctx).tools).toEqual(["a", "c", "z"]);
    expect(memo.build({ ...ctx, now: new Date(0) }).datetime).toBe("1970-01-01T00:00:00Z");
    expect(memo.build({ ...ctx, cwd: "/other" }).cwd).toBe("/other");
    expect(memo.build({ ...ctx, scope: { ...ctx.scope, summary: "T" } }).scope.summary).toBe("T");
  });

  it("a_bad_item_is_still_rejected_after_a_good_call_with_the_same_array", () => {
    const memo = new RenderDataMemo();
    const readable: unknown[] = ["/repo"];
    const ctx = sampleContext({ scope: { readable: readable as string[], writable: [], summary: "S" } });
    expect(memo.build(ctx).scope.readable).toEqual(["/repo"]);
    readable.push(7);
    let caught: unknown;
    try {
      memo.build(ctx);
    } catch (error) {
      caught = error;
    }
    expect(SystemPromptError.is(caught) && [caught.code, caught.message]).toEqual([
      "INVALID_CONTEXT",
      "invalid render context: scope.readable[1] must be a string, got number",
    ]);
    expect(() => memo.build({ ...ctx, now: new Date(Date.UTC(10000, 0, 1)) })).toThrow(SystemPromptError);
  });

  it("any_sequence_of_calls_and_in_place_changes_gives_what_a_fresh_build_gives", () => {
    const item = fc.constantFrom("a", "b", "c", "/repo", "é");
    const step = fc.oneof(
      fc.record({ kind: fc.constant("push" as const), list: fc.constantFrom(0, 1, 2), value: item }),
      fc.record({ kind: fc.constant("set" as const), list: fc.constantFrom(0, 1, 2), at: fc.nat(3), value: item }),
      fc.record({ kind: fc.constant("pop" as const), list: fc.constantFrom(0, 1, 2) }),
      fc.record({
        kind: fc.constant("replace" as const),
        list: fc.constantFrom(0, 1, 2),
        values: fc.array(item, { maxLength: 4 }),
      }),
      fc.record({ kind: fc.constant("now" as const), ms: fc.constantFrom(0, 1000, 1_764_520_620_000) }),
      fc.record({ kind: fc.constant("cwd" as const), value: item }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 25 }), (steps) => {
        const memo = new RenderDataMemo();
        const lists: string[][] = [["a"], ["b"], ["c", "a"]];
        let now = new Date(0);
        let cwd = "/repo";
        const ctx = (): RenderContext => ({
          now,
          cwd,
          scope: { readable: lists[0]!, writable: lists[1]!, summary: "S" },
          tools: lists[2]!,
        });
        for (const s of steps) {
          if (s.kind === "push") lists[s.list]!.push(s.value);
          else if (s.kind === "set") lists[s.list]![Math.min(s.at, lists[s.list]!.length)] = s.value;
          else if (s.kind === "pop") lists[s.list]!.pop();
          else if (s.kind === "replace") lists[s.list] = [...s.values];
          else if (s.kind === "now") now = new Date(s.ms);
          else cwd = s.value;
          const data = memo.build(ctx());
          expect(data).toEqual(expectedData(ctx()));
          expect([
            Object.isFrozen(data),
            Object.isFrozen(data.scope),
            Object.isFrozen(data.tools),
            Object.isFrozen(data.scope.writable),
          ]).toEqual([true, true, true, true]);
        }
      }),
    );
  });
});

describe("render state is reused across renders", () => {
  it("output_near_the_cap_is_counted_in_utf8_bytes_exactly", async () => {
    p.write("$workspace/list", "{{#each tools}}{{this}}{{/each}}");
    const template = await SystemPromptTemplate.parse("$workspace/list", p.loader);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: "binary", maxLength: 6 }), { maxLength: 6 }), fc.nat(60), (tools, cap) => {
        const expected = [...tools].sort().join("");
        const bytes = Buffer.byteLength(expected, "utf8");
        const ctx = sampleContext({ tools });
        if (bytes <= cap) {
          expect(template.renderInstruction(ctx, { maxOutputBytes: cap })).toBe(expected);
        } else {
          const error = renderError(template, ctx, { maxOutputBytes: cap });
          expect([error.code, error.ref]).toEqual(["OUTPUT_TOO_LARGE", "$workspace/list"]);
          expect(error.message).toContain(`larger than ${cap} bytes`);
        }
      }),
      { numRuns: 500 },
    );
    // Three-byte characters: 3 × 4 = 12 bytes fit a cap of 12 and not one of 11.
    const ctx = sampleContext({ tools: ["€€", "€€"] });
    expect(template.renderInstruction(ctx, { maxOutputBytes: 12 })).toBe("€€€€");
    expect(renderError(template, ctx, { maxOutputBytes: 11 }).message).toContain("(at least 12)");
  });

  it("a_failed_render_leaves_nothing_behind_for_the_next_one", async () => {
    p.write("$workspace/main", "Main {{> part}} end");
    p.write("$workspace/part", "{{#each tools}}[{{this}}]{{/each}}");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    const ctx = sampleContext({ tools: ["a", "b", "c"] });
    const first = renderError(template, ctx, { maxSteps: 3 });
    expect([first.code, first.ref, first.chain]).toEqual([
      "RENDER_BUDGET_EXCEEDED",
      "$workspace/part",
      ["$workspace/main", "$workspace/part"],
    ]);
    expect(template.renderInstruction(ctx)).toBe("Main [a][b][c] end");
    const tooBig = renderError(template, ctx, { maxOutputBytes: 8 });
    expect([tooBig.code, tooBig.ref, tooBig.chain]).toEqual([
      "OUTPUT_TOO_LARGE",
      "$workspace/part",
      ["$workspace/main", "$workspace/part"],
    ]);
    const again = renderError(template, ctx, { maxSteps: 3 });
    expect([again.code, again.ref, again.line, again.column, again.chain]).toEqual([
      first.code,
      first.ref,
      first.line,
      first.column,
      first.chain,
    ]);
    expect(template.renderInstruction(ctx, { maxOutputBytes: 18 })).toBe("Main [a][b][c] end");
    expect(template.render(ctx)).toBe(`Main [a][b][c] end\n\n---\n## Working boundaries\n\n${ctx.scope.summary}\n`);
  });

  it("two_templates_and_interleaved_renders_do_not_share_counters", async () => {
    p.write("$workspace/one", "{{#each tools}}1{{/each}}");
    p.write("$workspace/two", "{{#each tools}}2{{/each}}{{cwd}}");
    const one = await SystemPromptTemplate.parse("$workspace/one", p.loader);
    const two = await SystemPromptTemplate.parse("$workspace/two", p.loader);
    const ctx = sampleContext({ tools: ["a", "b"] });
    for (let i = 0; i < 3; i++) {
      expect(one.renderInstruction(ctx, { maxSteps: 3 })).toBe("11");
      expect(two.renderInstruction(sampleContext({ tools: ["x"], cwd: "/c" }), { maxSteps: 2 })).toBe("2/c");
    }
  });
});

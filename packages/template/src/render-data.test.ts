import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sampleContext } from "./__fixtures__/prompt-dirs.ts";
import { buildRenderData } from "./render-data.ts";
import { SystemPromptError } from "./system-prompt-error.ts";

describe("buildRenderData", () => {
  it("formats_date_time_and_datetime_in_utc", () => {
    const data = buildRenderData(sampleContext({ now: new Date("2026-11-30T16:37:00.999+09:00") }));
    expect([data.date, data.time, data.datetime]).toEqual(["2026-11-30", "07:37:00", "2026-11-30T07:37:00Z"]);
  });

  it("datetime_matches_toISOString_to_the_second", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("0000-01-01T00:00:00Z"), max: new Date("9999-12-31T23:59:59Z"), noInvalidDate: true }),
        (now) => {
          const data = buildRenderData(sampleContext({ now }));
          expect(data.datetime).toBe(`${now.toISOString().slice(0, 19)}Z`);
          expect(`${data.date}T${data.time}Z`).toBe(data.datetime);
        },
      ),
    );
  });

  it("freezes_a_sorted_copy_and_leaves_the_caller_data_alone", () => {
    const tools = ["b", "a", "c"];
    const data = buildRenderData(sampleContext({ tools }));
    expect(data.tools).toEqual(["a", "b", "c"]);
    expect(tools).toEqual(["b", "a", "c"]);
    expect([
      Object.isFrozen(data),
      Object.isFrozen(data.tools),
      Object.isFrozen(data.scope),
      Object.isFrozen(data.scope.readable),
    ]).toEqual([true, true, true, true]);
  });

  it("rejects_a_malformed_context_with_invalid_context", () => {
    const bad = [
      { ...sampleContext(), now: new Date(Number.NaN) },
      { ...sampleContext(), now: "2026-01-01" },
      { ...sampleContext(), cwd: 1 },
      { ...sampleContext(), tools: ["a", 2] },
      { ...sampleContext(), scope: { readable: [], writable: [] } },
      { ...sampleContext(), agentsMd: 3 },
      { ...sampleContext(), now: new Date(Date.UTC(10000, 0, 1)) },
    ];
    for (const ctx of bad) {
      let caught: unknown;
      try {
        buildRenderData(ctx as never);
      } catch (error) {
        caught = error;
      }
      expect(SystemPromptError.is(caught) && [caught.code, caught.phase]).toEqual(["INVALID_CONTEXT", "render"]);
    }
  });
});

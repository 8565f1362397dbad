import { expect, it } from "vitest";
import { isSegmentRecord } from "./segment-record.ts";

const start = { type: "segment_start", systemPrompt: "p", sources: [], createdAt: "2026-01-01T00:00:00Z" };
const definition = { name: "mcp__fx__echo", description: "Echoes.", inputSchema: { type: "object" } };

it("a_start_record_may_carry_tool_definitions_and_older_ones_without_them_still_pass", () => {
  expect(isSegmentRecord(start)).toBe(true);
  expect(isSegmentRecord({ ...start, tools: ["mcp__fx__echo"], toolDefinitions: [definition] })).toBe(true);
});

it("malformed_tool_definitions_make_a_start_record_invalid", () => {
  for (const toolDefinitions of [
    {},
    [{ ...definition, name: 1 }],
    [{ ...definition, description: undefined }],
    [{ ...definition, inputSchema: [] }],
    [null],
  ]) {
    expect(isSegmentRecord({ ...start, toolDefinitions })).toBe(false);
  }
});

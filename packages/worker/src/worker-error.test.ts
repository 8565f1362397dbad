import { describe, expect, test } from "vitest";
import { WorkerError } from "./worker-error.ts";

describe("WorkerError", () => {
  test("keeps_code_cause_and_tool", () => {
    const cause = new Error("inner");
    const error = new WorkerError("TOOL_FACTORY_FAILED", "factory failed", { cause, tool: "read" });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("WorkerError");
    expect(error.code).toBe("TOOL_FACTORY_FAILED");
    expect(error.cause).toBe(cause);
    expect(error.tool).toBe("read");
    expect(error.message).toBe("factory failed");
    const plain = new WorkerError("BUSY", "busy");
    expect("cause" in plain).toBe(false);
    expect("tool" in plain).toBe(false);
  });

  test("is_recognizes_the_brand_across_copies", () => {
    expect(WorkerError.is(new WorkerError("MAX_ITERATIONS", "x"))).toBe(true);
    // What a second installed copy of the package would produce: another class, same brand.
    const foreign = Object.assign(new Error("x"), { code: "MAX_ITERATIONS" });
    Object.defineProperty(foreign, Symbol.for("insomnia.worker.error"), { value: true });
    expect(WorkerError.is(foreign)).toBe(true);
    expect(WorkerError.is(new Error("x"))).toBe(false);
    expect(WorkerError.is({ code: "MAX_ITERATIONS" })).toBe(false);
    expect(WorkerError.is(null)).toBe(false);
    expect(WorkerError.is("WorkerError")).toBe(false);
  });
});

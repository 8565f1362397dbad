import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { echoTool, failingTool } from "./test-tools.ts";
import type { Tool } from "./tool.ts";
import { caught, deferred } from "./__fixtures__/async.ts";
import { ToolServer } from "./tool-server.ts";
import { WorkerError } from "./worker-error.ts";

function thrown(fn: () => unknown): WorkerError {
  try {
    fn();
  } catch (error) {
    if (WorkerError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a throw");
}

describe("ToolServer", () => {
  test("tool_factories_are_lazy_until_flush_pending", async () => {
    const server = new ToolServer();
    const calls: string[] = [];
    server.registerFactory(() => {
      calls.push("read");
      return echoTool("read");
    });
    server.registerFactory(async () => {
      calls.push("write");
      return echoTool("write");
    });
    server.register(echoTool("direct"));
    expect(calls).toEqual([]);
    expect(server.names()).toEqual(["direct"]);
    expect(server.pendingCount).toBe(2);

    await server.flushPending();
    expect(calls).toEqual(["read", "write"]);
    expect(server.names()).toEqual(["direct", "read", "write"]);
    expect(server.pendingCount).toBe(0);

    await server.flushPending();
    expect(calls).toEqual(["read", "write"]);
  });

  test("concurrent_flushes_run_each_factory_once", async () => {
    const server = new ToolServer();
    const gate = deferred<Tool>();
    let calls = 0;
    server.registerFactory(() => {
      calls += 1;
      return gate.promise;
    });
    const first = server.flushPending();
    const second = server.flushPending();
    const namesSeen: string[][] = [];
    void second.then(() => namesSeen.push(server.names()));
    gate.resolve(echoTool("slow"));
    await Promise.all([first, second]);
    expect(calls).toBe(1);
    // The second flush had nothing of its own, yet resolved only once the name was known.
    expect(namesSeen).toEqual([["slow"]]);
  });

  test("throwing_factory_fails_with_cause_and_others_still_materialize", async () => {
    const server = new ToolServer();
    const boom = new Error("mcp server did not start");
    server.registerFactory(() => echoTool("a"));
    server.registerFactory(() => {
      throw boom;
    });
    server.registerFactory(async () => echoTool("c"));
    const error = await caught(server.flushPending());
    expect(error.code).toBe("TOOL_FACTORY_FAILED");
    expect(error.cause).toBe(boom);
    expect(error.message).toBe(
      "tool factory #2 failed: mcp server did not start; fix the factory and register it again",
    );
    expect(server.names()).toEqual(["a", "c"]);
  });

  test("failed_factory_is_not_retried", async () => {
    const server = new ToolServer();
    let calls = 0;
    server.registerFactory(() => {
      calls += 1;
      throw new Error("nope");
    });
    expect((await caught(server.flushPending())).code).toBe("TOOL_FACTORY_FAILED");
    await expect(server.flushPending()).resolves.toBeUndefined();
    expect(calls).toBe(1);
  });

  test("every_concurrent_flush_reports_the_failure", async () => {
    const server = new ToolServer();
    const gate = deferred<Tool>();
    server.registerFactory(() => gate.promise.then(() => Promise.reject(new Error("late"))));
    const first = caught(server.flushPending());
    const second = caught(server.flushPending());
    gate.resolve(echoTool("unused"));
    expect((await first).code).toBe("TOOL_FACTORY_FAILED");
    expect((await second).code).toBe("TOOL_FACTORY_FAILED");
  });

  test("several_failures_report_the_first_and_count_the_rest", async () => {
    const server = new ToolServer();
    server.registerFactory(() => Promise.reject(new Error("one")));
    server.registerFactory(() => echoTool("ok"));
    server.registerFactory(() => ({ name: "", description: "", inputSchema: {}, execute: () => "" }));
    const error = await caught(server.flushPending());
    expect(error.code).toBe("TOOL_FACTORY_FAILED");
    expect(error.message).toBe(
      "tool factory #1 failed: one; fix the factory and register it again (and 1 more tool failure(s))",
    );
    expect(server.names()).toEqual(["ok"]);
  });

  test("factory_returning_a_non_tool_fails", async () => {
    const server = new ToolServer();
    server.registerFactory(() => ({ name: "x" }) as unknown as Tool);
    const error = await caught(server.flushPending());
    expect(error.code).toBe("TOOL_FACTORY_FAILED");
    expect(error.message).toBe('tool factory #1 returned an unusable tool: tool "x" needs a string description');
    expect(server.names()).toEqual([]);
  });

  test("duplicate_tool_name_is_rejected", async () => {
    const server = new ToolServer();
    server.register(echoTool("read"));
    const direct = thrown(() => server.register(echoTool("read")));
    expect(direct.code).toBe("DUPLICATE_TOOL");
    expect(direct.tool).toBe("read");
    expect(direct.message).toBe('a tool named "read" is already registered; give one of them another name');

    server.registerFactory(() => echoTool("write"));
    server.registerFactory(() => echoTool("write"));
    server.registerFactory(() => echoTool("read"));
    const viaFactory = await caught(server.flushPending());
    expect(viaFactory.code).toBe("DUPLICATE_TOOL");
    expect(viaFactory.tool).toBe("write");
    expect(server.names()).toEqual(["read", "write"]);
  });

  test("invalid_registrations_are_invalid_argument", () => {
    const server = new ToolServer();
    expect(thrown(() => server.register({ ...echoTool("x"), name: "" })).code).toBe("INVALID_ARGUMENT");
    expect(
      thrown(() => server.register({ ...echoTool("x"), inputSchema: [] as unknown as Record<string, unknown> }))
        .message,
    ).toBe('cannot register tool: tool "x" needs an object inputSchema');
    expect(thrown(() => server.registerFactory("x" as unknown as () => Tool)).code).toBe("INVALID_ARGUMENT");
    expect(server.names()).toEqual([]);
  });

  test("names_are_sorted_by_code_unit_order", () => {
    const server = new ToolServer();
    for (const name of ["b", "é", "B", "_x", "a", "Z", "aa", "😀", "ｚ"]) server.register(echoTool(name));
    // Code units: B(42) Z(5a) _(5f) a(61) b(62) é(e9) ｚ(ff5a) 😀(d83d …) sorts before ｚ.
    expect(server.names()).toEqual(["B", "Z", "_x", "a", "aa", "b", "é", "😀", "ｚ"]);
  });

  test("names_match_code_unit_sort_for_any_names", () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 1, unit: "grapheme" }), { maxLength: 20 }), (names) => {
        const server = new ToolServer();
        for (const name of names) server.register(echoTool(name));
        const expected = [...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(server.names()).toEqual(expected);
        expect(server.definitions().map((d) => d.name)).toEqual(expected);
      }),
    );
  });

  test("definitions_are_frozen_snapshots", () => {
    const server = new ToolServer();
    const schema = { type: "object", properties: { path: { type: "string" } } };
    server.register({ name: "read", description: "Reads a file.", inputSchema: schema, execute: () => "" });
    schema.properties.path.type = "number";
    const [definition] = server.definitions();
    expect(definition).toEqual({
      name: "read",
      description: "Reads a file.",
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
    });
    expect(Object.isFrozen(definition)).toBe(true);
    expect(Object.isFrozen(definition!.inputSchema)).toBe(true);
  });

  test("call_runs_the_tool_with_a_copy_of_its_input", async () => {
    const server = new ToolServer();
    const seen: unknown[] = [];
    server.register({
      name: "mutate",
      description: "",
      inputSchema: {},
      execute: (input) => {
        (input as { n: number }).n += 1;
        seen.push(input);
        return "done";
      },
    });
    const input = Object.freeze({ n: 1 });
    const message = await server.call({ id: "c1", name: "mutate", input });
    expect(message).toEqual({ role: "tool", toolCallId: "c1", name: "mutate", content: "done" });
    expect(seen).toEqual([{ n: 2 }]);
    expect(input).toEqual({ n: 1 });
  });

  test("call_unknown_tool_returns_an_error_message", async () => {
    const server = new ToolServer();
    server.register(echoTool("read"));
    server.register(echoTool("list"));
    expect(await server.call({ id: "c1", name: "write", input: {} })).toEqual({
      role: "tool",
      toolCallId: "c1",
      name: "write",
      content: 'unknown tool "write"; available tools: list, read',
      isError: true,
    });
    expect((await new ToolServer().call({ id: "c2", name: "x", input: null })).content).toBe(
      'unknown tool "x"; available tools: (none)',
    );
  });

  test("call_throwing_tool_returns_an_error_message", async () => {
    const server = new ToolServer();
    server.register(failingTool("boom", "disk on fire"));
    server.register({ name: "str", description: "", inputSchema: {}, execute: () => Promise.reject("plain string") });
    server.register({ name: "num", description: "", inputSchema: {}, execute: () => 42 as unknown as string });
    expect(await server.call({ id: "1", name: "boom", input: {} })).toEqual({
      role: "tool",
      toolCallId: "1",
      name: "boom",
      content: "disk on fire",
      isError: true,
    });
    expect((await server.call({ id: "2", name: "str", input: {} })).content).toBe("plain string");
    expect(await server.call({ id: "3", name: "num", input: {} })).toEqual({
      role: "tool",
      toolCallId: "3",
      name: "num",
      content: 'tool "num" returned number, expected a string',
      isError: true,
    });
  });
});

describe("factories that build several tools", () => {
  test("a_factory_may_return_a_list_of_tools_added_in_its_order", async () => {
    const server = new ToolServer();
    server.registerFactory(async () => [echoTool("mcp__s__b"), echoTool("mcp__s__a")]);
    server.registerFactory(() => []);
    await server.flushPending();
    expect(server.names()).toEqual(["mcp__s__a", "mcp__s__b"]);
  });

  test("a_bad_tool_in_a_list_fails_the_flush_and_keeps_the_good_ones", async () => {
    const server = new ToolServer();
    server.registerFactory(() => [echoTool("good"), { name: "" } as unknown as Tool]);
    const error = await caught(server.flushPending());
    expect(WorkerError.is(error) && error.code).toBe("TOOL_FACTORY_FAILED");
    expect(server.names()).toEqual(["good"]);
  });
});

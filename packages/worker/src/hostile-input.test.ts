import { isDeepStrictEqual } from "node:util";
import fc from "fast-check";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
  Worker,
  WorkerError,
  type LlmClient,
  type LlmRequest,
  type Message,
  type Tool,
  type TurnResult,
  type WorkerErrorCode,
} from "./index.ts";
import { guarded } from "../../../test/support/output-guard.ts";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";

// Each test here runs hundreds to thousands of generated cases in one go: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

// 6,000 generated worker runs against a hand-written hostile LLM client: responses that
// are not objects, bad `content`, bad `toolCalls` (not arrays, bad entries, duplicate ids,
// unknown tools, huge / cyclic / __proto__ / uncloneable inputs), thrown and rejected
// non-Error values, thenables, clients that tamper with the request or with an earlier
// response; tools that throw anything, return non-strings or mutate their input; and
// malformed histories given to setHistory. Each run must end in a WorkerError with a
// documented code or in a TurnResult whose history equals what the model below computes
// without the package; nothing may print, warn or reject unhandled.
//
// Left out on purpose: a client (or tool, or thenable) that never settles hangs the run by
// design. Values with throwing getters (a response, tool call, history message or thrown
// value whose property access throws) and typed arrays in tool inputs used to escape as
// raw errors; they are fixed and pinned by named tests in worker.test.ts.

const SEED = 0x30_2ce7;
const RUNS = propertyRuns(150, 6_000);

const CODES: ReadonlySet<WorkerErrorCode> = new Set<WorkerErrorCode>([
  "NO_SYSTEM_PROMPT",
  "MAX_ITERATIONS",
  "UNKNOWN_TOOL",
  "CLIENT_FAILED",
  "TOOL_FACTORY_FAILED",
  "DUPLICATE_TOOL",
  "INVALID_ARGUMENT",
  "BUSY",
]);

// ---- hostile values -----------------------------------------------------------------------

/** Thrown (or rejected) values, with the text a tool message must show for them. */
const THROWN: Readonly<Record<string, { make: () => unknown; text: string }>> = {
  error: { make: () => new Error("boom"), text: "boom" },
  typeError: { make: () => new TypeError("bad type"), text: "bad type" },
  string: { make: () => "a string", text: "a string" },
  undefined: { make: () => undefined, text: "undefined" },
  null: { make: () => null, text: "null" },
  number: { make: () => 42, text: "42" },
  messageObject: { make: () => ({ message: "from object" }), text: "from object" },
  numberMessage: { make: () => ({ message: 7 }), text: "[object Object]" },
  plainObject: { make: () => ({ code: 1 }), text: "[object Object]" },
  nullProto: { make: () => Object.create(null) as unknown, text: "unprintable error" },
  symbol: { make: () => Symbol("s"), text: "Symbol(s)" },
  array: { make: () => [1, [2]], text: "1,2" },
};
const THROWN_KINDS = Object.keys(THROWN);

type InputSpec =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "absent" }
  | {
      readonly kind: "proto" | "cyclic" | "huge-string" | "huge-array" | "deep-1000" | "special" | "bigint";
    }
  | {
      readonly kind: "uncloneable";
      readonly which: "function" | "symbol" | "weakmap" | "nested-function" | "deep-100000";
    };

/** Builds a fresh input; `cloneable` says whether structuredClone accepts it. */
function buildInput(spec: InputSpec): { value: unknown; present: boolean; cloneable: boolean } {
  switch (spec.kind) {
    case "json":
      return { value: structuredClone(spec.value), present: true, cloneable: true };
    case "absent":
      return { value: undefined, present: false, cloneable: true };
    case "proto":
      return {
        value: JSON.parse('{"__proto__":{"polluted":true},"a":{"__proto__":[1]},"constructor":{"prototype":{"x":1}}}'),
        present: true,
        cloneable: true,
      };
    case "cyclic": {
      const o: Record<string, unknown> = { a: [1] };
      o.self = o;
      (o.a as unknown[]).push(o);
      return { value: o, present: true, cloneable: true };
    }
    case "huge-string":
      return { value: { text: "x".repeat(200_000) }, present: true, cloneable: true };
    case "huge-array":
      return { value: Array.from({ length: 20_000 }, (_, i) => i), present: true, cloneable: true };
    case "deep-1000":
      return { value: nestArrays(1000), present: true, cloneable: true };
    case "special":
      return {
        value: { d: new Date(0), m: new Map([["k", 1]]), s: new Set([1]), n: Number.NaN, z: -0, u: undefined },
        present: true,
        cloneable: true,
      };
    case "bigint":
      return { value: { big: 10n }, present: true, cloneable: true };
    case "uncloneable": {
      const value =
        spec.which === "function"
          ? () => 1
          : spec.which === "symbol"
            ? Symbol("input")
            : spec.which === "weakmap"
              ? new WeakMap()
              : spec.which === "nested-function"
                ? { a: [{ f: () => 1 }] }
                : nestArrays(100_000);
      return { value, present: true, cloneable: false };
    }
  }
}

function nestArrays(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

type CallShape = "ok" | "extra-fields" | "null" | "array" | "string" | "no-id" | "id-number" | "no-name" | "name-null";
interface CallSpec {
  readonly shape: CallShape;
  readonly id: string;
  readonly name: string;
  readonly input: InputSpec;
}

type ResponseSpec =
  | { readonly kind: "final"; readonly content: string }
  | { readonly kind: "tools"; readonly content: string; readonly calls: readonly CallSpec[] }
  | {
      readonly kind: "bad";
      readonly which:
        | "null"
        | "undefined"
        | "number"
        | "string"
        | "array"
        | "boolean"
        | "content-missing"
        | "content-number"
        | "content-object"
        | "toolCalls-object"
        | "toolCalls-string"
        | "toolCalls-null"
        | "thenable-to-number";
    }
  | { readonly kind: "throw"; readonly thrown: string; readonly how: "sync" | "reject" | "thenable" }
  | { readonly kind: "thenable-ok"; readonly content: string }
  | { readonly kind: "tamper"; readonly content: string }
  | { readonly kind: "mutate-previous"; readonly content: string };

// ---- tools --------------------------------------------------------------------------------

/** A tool plus what its tool message must say for an input (computed on the original input). */
interface TestTool {
  readonly tool: Tool;
  readonly expect: (input: unknown) => { content: string; isError: boolean };
}

const ok = (content: string) => () => ({ content, isError: false });
const fails = (content: string) => () => ({ content, isError: true });
const returned = (name: string, what: string) => fails(`tool "${name}" returned ${what}, expected a string`);

function tool(name: string, execute: Tool["execute"], expectFor: TestTool["expect"]): TestTool {
  return {
    tool: { name, description: `the ${name} tool`, inputSchema: { type: "object" }, execute },
    expect: expectFor,
  };
}

function mutateDeeply(value: unknown): void {
  if (Array.isArray(value)) {
    value.length = 0;
    value.push("mutated");
  } else if (typeof value === "object" && value !== null) {
    for (const key of Object.keys(value)) delete (value as Record<string, unknown>)[key];
    (value as Record<string, unknown>).added = true;
  }
}

const TOOLS: readonly TestTool[] = [
  tool(
    "echo",
    (input) => JSON.stringify(input) ?? "undefined",
    (input) => {
      try {
        return { content: JSON.stringify(input) ?? "undefined", isError: false };
      } catch (error) {
        return { content: (error as Error).message, isError: true };
      }
    },
  ),
  tool(
    "mutate",
    (input) => {
      mutateDeeply(input);
      return "mutated";
    },
    ok("mutated"),
  ),
  tool(
    "typeof",
    async (input) => {
      await new Promise((resolve) => setImmediate(resolve));
      return typeof input;
    },
    (input) => ({ content: typeof input, isError: false }),
  ),
  tool("__proto__", () => "proto tool", ok("proto tool")),
  tool("constructor", () => "constructor tool", ok("constructor tool")),
  tool("ツール 🛠", () => "unicode tool", ok("unicode tool")),
  tool("rejects", () => Promise.reject(new Error("later")), fails("later")),
  ...THROWN_KINDS.map((kind) =>
    tool(
      `throw_${kind}`,
      () => {
        throw THROWN[kind]!.make();
      },
      fails(THROWN[kind]!.text),
    ),
  ),
  tool("ret_number", () => 42 as unknown as string, returned("ret_number", "number")),
  tool("ret_undefined", () => undefined as unknown as string, returned("ret_undefined", "undefined")),
  tool("ret_null", () => null as unknown as string, returned("ret_null", "null")),
  tool("ret_object", () => ({ toString: () => "x" }) as unknown as string, returned("ret_object", "object")),
  tool(
    "ret_promise_number",
    () => Promise.resolve(7) as unknown as Promise<string>,
    returned("ret_promise_number", "number"),
  ),
  tool("ret_bigint", () => 1n as unknown as string, returned("ret_bigint", "bigint")),
  tool("ret_empty", () => "", ok("")),
];
const TOOL_BY_NAME = new Map(TOOLS.map((t) => [t.tool.name, t]));
const TOOL_NAMES_SORTED = [...TOOL_BY_NAME.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
const UNKNOWN_NAMES = ["nope", "", "ECHO", "echo ", "toString", "hasOwnProperty", "valueOf", "\u0000", "ツール"];

// ---- generators ---------------------------------------------------------------------------

const textArb = fc.oneof(
  fc.string({ maxLength: 20 }),
  fc.string({ unit: "binary", maxLength: 20 }),
  fc.constantFrom("", "\u0000", "\r\n", "{{x}}}}", "__proto__", "\uD800", "x".repeat(5000)),
);
const idArb = fc.constantFrom("c1", "c2", "c3", "", "__proto__", "c1", "ид", "\u0000");
const nameArb = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...TOOL_NAMES_SORTED) },
  { weight: 1, arbitrary: fc.constantFrom(...UNKNOWN_NAMES) },
);
const inputArb: fc.Arbitrary<InputSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.record({ kind: fc.constant("json" as const), value: fc.jsonValue({ maxDepth: 3 }) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "absent" as const }) },
  {
    weight: 6,
    arbitrary: fc.constantFrom(
      ...(["proto", "cyclic", "huge-string", "huge-array", "deep-1000", "special", "bigint"] as const).map((kind) => ({
        kind,
      })),
    ),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      ...(["function", "symbol", "weakmap", "nested-function", "deep-100000"] as const).map((which) => ({
        kind: "uncloneable" as const,
        which,
      })),
    ),
  },
);
const callArb: fc.Arbitrary<CallSpec> = fc.record({
  shape: fc.oneof(
    { weight: 12, arbitrary: fc.constantFrom<CallShape>("ok", "extra-fields") },
    {
      weight: 1,
      arbitrary: fc.constantFrom<CallShape>("null", "array", "string", "no-id", "id-number", "no-name", "name-null"),
    },
  ),
  id: idArb,
  name: nameArb,
  input: inputArb,
});
const responseArb: fc.Arbitrary<ResponseSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant("final" as const), content: textArb }) },
  {
    weight: 14,
    arbitrary: fc.record({
      kind: fc.constant("tools" as const),
      content: textArb,
      calls: fc.array(callArb, { maxLength: 4 }),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("bad" as const),
      which: fc.constantFrom(
        "null",
        "undefined",
        "number",
        "string",
        "array",
        "boolean",
        "content-missing",
        "content-number",
        "content-object",
        "toolCalls-object",
        "toolCalls-string",
        "toolCalls-null",
        "thenable-to-number",
      ),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("throw" as const),
      thrown: fc.constantFrom(...THROWN_KINDS),
      how: fc.constantFrom("sync", "reject", "thenable"),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("thenable-ok" as const), content: textArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("tamper" as const), content: textArb }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("mutate-previous" as const), content: textArb }) },
);

type HistorySpec =
  | { readonly kind: "user"; readonly content: string; readonly extra: boolean }
  | { readonly kind: "assistant"; readonly content: string; readonly calls: readonly CallSpec[] | undefined }
  | {
      readonly kind: "tool";
      readonly id: string;
      readonly name: string;
      readonly content: string;
      readonly isError: boolean | undefined;
    }
  | {
      readonly kind: "bad";
      readonly which:
        | "null"
        | "number"
        | "string"
        | "array"
        | "role-system"
        | "role-missing"
        | "content-missing"
        | "content-number"
        | "tool-no-id"
        | "tool-no-name"
        | "tool-isError-string"
        | "toolCalls-string";
    };

const historyArb: fc.Arbitrary<HistorySpec> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("user" as const), content: textArb, extra: fc.boolean() }) },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("assistant" as const),
      content: textArb,
      calls: fc.option(fc.array(callArb, { maxLength: 3 }), { nil: undefined }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("tool" as const),
      id: idArb,
      name: nameArb,
      content: textArb,
      isError: fc.option(fc.boolean(), { nil: undefined }),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("bad" as const),
      which: fc.constantFrom(
        "null",
        "number",
        "string",
        "array",
        "role-system",
        "role-missing",
        "content-missing",
        "content-number",
        "tool-no-id",
        "tool-no-name",
        "tool-isError-string",
        "toolCalls-string",
      ),
    }),
  },
);

interface Scenario {
  readonly maxIterations: number;
  readonly prompt:
    | { readonly kind: "string"; readonly value: string }
    | { readonly kind: "unset" }
    | { readonly kind: "non-string" };
  readonly history: readonly HistorySpec[] | undefined;
  readonly action:
    | { readonly kind: "run"; readonly input: string }
    | { readonly kind: "resume" }
    | { readonly kind: "run-non-string" };
  readonly responses: readonly ResponseSpec[];
  readonly listener: boolean;
}

const scenarioArb: fc.Arbitrary<Scenario> = fc.record({
  maxIterations: fc.integer({ min: 1, max: 5 }),
  prompt: fc.oneof(
    { weight: 20, arbitrary: fc.record({ kind: fc.constant("string" as const), value: textArb }) },
    { weight: 1, arbitrary: fc.constant({ kind: "unset" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "non-string" as const }) },
  ),
  history: fc.option(fc.array(historyArb, { maxLength: 5 }), { nil: undefined, freq: 3 }),
  action: fc.oneof(
    { weight: 10, arbitrary: fc.record({ kind: fc.constant("run" as const), input: textArb }) },
    { weight: 5, arbitrary: fc.constant({ kind: "resume" as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: "run-non-string" as const }) },
  ),
  responses: fc.array(responseArb, { maxLength: 7 }),
  listener: fc.boolean(),
});

// ---- building the hostile values ----------------------------------------------------------

/** A built call and what the worker must store for it (undefined when the response is invalid). */
function buildCall(spec: CallSpec): { raw: unknown; stored: { id: string; name: string; input: unknown } | undefined } {
  const input = buildInput(spec.input);
  const base: Record<string, unknown> = { id: spec.id, name: spec.name };
  if (input.present) base.input = input.value;
  // A second build, so that a client mutating what it handed out cannot change the expectation.
  const stored = input.cloneable ? { id: spec.id, name: spec.name, input: buildInput(spec.input).value } : undefined;
  switch (spec.shape) {
    case "ok":
      return { raw: base, stored };
    case "extra-fields":
      return { raw: { ...base, extra: { nested: true }, type: "function", isError: true }, stored };
    case "null":
      return { raw: null, stored: undefined };
    case "array":
      return { raw: [spec.id, spec.name], stored: undefined };
    case "string":
      return { raw: spec.id, stored: undefined };
    case "no-id":
      return { raw: { name: spec.name, input: input.value }, stored: undefined };
    case "id-number":
      return { raw: { ...base, id: 1 }, stored: undefined };
    case "no-name":
      return { raw: { id: spec.id, input: input.value }, stored: undefined };
    case "name-null":
      return { raw: { ...base, name: null }, stored: undefined };
  }
}

type Stored = { id: string; name: string; input: unknown };

/** A history message as given to setHistory, and its normalized form (a string when invalid). */
function buildHistoryMessage(spec: HistorySpec): { raw: unknown; expected: Message | string } {
  switch (spec.kind) {
    case "user":
      return {
        raw: spec.extra
          ? { role: "user", content: spec.content, toolCalls: "ignored", isError: 1 }
          : { role: "user", content: spec.content },
        expected: { role: "user", content: spec.content },
      };
    case "assistant": {
      if (spec.calls === undefined)
        return {
          raw: { role: "assistant", content: spec.content },
          expected: { role: "assistant", content: spec.content },
        };
      const built = spec.calls.map(buildCall);
      const raw = { role: "assistant", content: spec.content, toolCalls: built.map((b) => b.raw) };
      if (built.some((b) => b.stored === undefined)) return { raw, expected: "invalid tool call" };
      const stored = built.map((b) => b.stored as Stored);
      return {
        raw,
        expected:
          stored.length === 0
            ? { role: "assistant", content: spec.content }
            : { role: "assistant", content: spec.content, toolCalls: stored },
      };
    }
    case "tool": {
      const raw: Record<string, unknown> = {
        role: "tool",
        toolCallId: spec.id,
        name: spec.name,
        content: spec.content,
      };
      if (spec.isError !== undefined) raw.isError = spec.isError;
      const expected = { role: "tool" as const, toolCallId: spec.id, name: spec.name, content: spec.content };
      return { raw, expected: spec.isError === true ? { ...expected, isError: true } : expected };
    }
    case "bad": {
      const raw: Record<string, unknown> = {
        null: null,
        number: 3,
        string: "user: hi",
        array: ["user", "hi"],
        "role-system": { role: "system", content: "x" },
        "role-missing": { content: "x" },
        "content-missing": { role: "user" },
        "content-number": { role: "assistant", content: 1 },
        "tool-no-id": { role: "tool", name: "echo", content: "x" },
        "tool-no-name": { role: "tool", toolCallId: "c1", content: "x" },
        "tool-isError-string": { role: "tool", toolCallId: "c1", name: "echo", content: "x", isError: "yes" },
        "toolCalls-string": { role: "assistant", content: "x", toolCalls: "echo" },
      };
      return { raw: raw[spec.which], expected: `bad ${spec.which}` };
    }
  }
}

/** The response the client gives, and what the worker must make of it. */
type Evaluated =
  | { readonly valid: true; readonly message: Message & { role: "assistant" } }
  | { readonly valid: false; readonly cause?: { value: unknown } };

interface BuiltResponse {
  /** Called inside client.complete: returns, throws or returns a promise. */
  readonly produce: (request: LlmRequest) => unknown;
  readonly evaluated: Evaluated;
  /** The object handed out, for mutate-previous. */
  readonly handedOut: unknown[];
}

function assistant(content: string, calls?: readonly Stored[]): Message & { role: "assistant" } {
  return calls === undefined || calls.length === 0
    ? { role: "assistant", content }
    : { role: "assistant", content, toolCalls: calls };
}

function buildResponse(spec: ResponseSpec, previous: readonly BuiltResponse[]): BuiltResponse {
  const handedOut: unknown[] = [];
  const give = (value: unknown) => () => {
    handedOut.push(value);
    return value;
  };
  switch (spec.kind) {
    case "final":
      return {
        produce: give({ content: spec.content }),
        evaluated: { valid: true, message: assistant(spec.content) },
        handedOut,
      };
    case "tools": {
      const built = spec.calls.map(buildCall);
      const value = { content: spec.content, toolCalls: built.map((b) => b.raw) };
      const valid = built.every((b) => b.stored !== undefined);
      return {
        produce: give(value),
        evaluated: valid
          ? {
              valid: true,
              message: assistant(
                spec.content,
                built.map((b) => b.stored as Stored),
              ),
            }
          : { valid: false },
        handedOut,
      };
    }
    case "bad": {
      const values: Record<typeof spec.which, unknown> = {
        null: null,
        undefined: undefined,
        number: 1,
        string: "just text",
        array: ["content"],
        boolean: true,
        "content-missing": { toolCalls: [] },
        "content-number": { content: 5 },
        "content-object": { content: { text: "x" } },
        "toolCalls-object": { content: "", toolCalls: { 0: { id: "c1", name: "echo", input: {} }, length: 1 } },
        "toolCalls-string": { content: "", toolCalls: "echo" },
        "toolCalls-null": { content: "", toolCalls: null },
        "thenable-to-number": { then: (resolve: (v: unknown) => void) => resolve(3) },
      };
      return { produce: give(values[spec.which]), evaluated: { valid: false }, handedOut };
    }
    case "throw": {
      const thrown = THROWN[spec.thrown]!.make();
      const produce =
        spec.how === "sync"
          ? () => {
              throw thrown;
            }
          : spec.how === "reject"
            ? () => Promise.reject(thrown)
            : () => ({
                then: (_resolve: unknown, reject: (reason: unknown) => void) => reject(thrown),
              });
      return { produce, evaluated: { valid: false, cause: { value: thrown } }, handedOut };
    }
    case "thenable-ok":
      return {
        produce: give({ then: (resolve: (v: unknown) => void) => resolve({ content: spec.content }) }),
        evaluated: { valid: true, message: assistant(spec.content) },
        handedOut,
      };
    case "tamper":
      return {
        produce: (request) => {
          const attempts: (() => void)[] = [
            () => (request.messages as Message[]).push({ role: "user", content: "injected" }),
            () => ((request.messages as Message[]).length = 0),
            () => ((request.messages[0] as { content: string }).content = "changed"),
            () => ((request.messages[0] as { toolCalls?: unknown }).toolCalls = []),
            () => ((request.tools as unknown[]).length = 0),
            () => ((request.tools[0] as { name: string }).name = "renamed"),
            () => ((request.tools[0]?.inputSchema as Record<string, unknown>).type = "array"),
            () => {
              const first = request.messages.find((m) => m.role === "assistant" && m.toolCalls !== undefined);
              if (first?.role === "assistant") mutateDeeply(first.toolCalls?.[0]?.input);
            },
          ];
          for (const attempt of attempts) {
            try {
              attempt();
            } catch {
              // Frozen, as it should be; the history comparison catches any that went through.
            }
          }
          return { content: spec.content };
        },
        evaluated: { valid: true, message: assistant(spec.content) },
        handedOut,
      };
    case "mutate-previous":
      return {
        produce: () => {
          for (const value of previous.flatMap((p) => p.handedOut)) {
            if (typeof value !== "object" || value === null) continue;
            const record = value as Record<string, unknown>;
            for (const call of Array.isArray(record.toolCalls) ? (record.toolCalls as unknown[]) : []) {
              if (typeof call === "object" && call !== null) {
                mutateDeeply((call as Record<string, unknown>).input);
                (call as Record<string, unknown>).id = "mutated-id";
              }
            }
            if (Array.isArray(record.toolCalls)) record.toolCalls.push({ id: "late", name: "echo", input: 1 });
            record.content = "mutated content";
          }
          return { content: spec.content };
        },
        evaluated: { valid: true, message: assistant(spec.content) },
        handedOut,
      };
  }
}

// ---- the model: what the worker must do, computed without it ------------------------------

function toolMessage(call: Stored): Message {
  const base = { role: "tool" as const, toolCallId: call.id, name: call.name };
  const known = TOOL_BY_NAME.get(call.name);
  if (known === undefined) {
    return {
      ...base,
      content: `unknown tool "${call.name}"; available tools: ${TOOL_NAMES_SORTED.join(", ")}`,
      isError: true,
    };
  }
  const { content, isError } = known.expect(call.input);
  return isError ? { ...base, content, isError: true } : { ...base, content };
}

interface ModelOutcome {
  readonly code?: WorkerErrorCode;
  /** The cause the error must carry (CLIENT_FAILED from a throw). */
  readonly cause?: { value: unknown };
  readonly history: Message[];
  readonly appended: Message[];
  /** The history the client must see on each call. */
  readonly requests: Message[][];
  readonly final?: string;
}

function simulate(
  initial: readonly Message[],
  input: string | undefined,
  maxIterations: number,
  responses: readonly BuiltResponse[],
): ModelOutcome {
  const history = [...initial];
  const appended: Message[] = [];
  const requests: Message[][] = [];
  const push = (m: Message): void => {
    history.push(m);
    appended.push(m);
  };
  let index = history.length - 1;
  while (index >= 0 && history[index]!.role === "tool") index -= 1;
  const last = history[index];
  if (last?.role === "assistant" && last.toolCalls !== undefined) {
    const answered = new Set(history.slice(index + 1).map((m) => (m.role === "tool" ? m.toolCallId : "")));
    for (const call of last.toolCalls.filter((c) => !answered.has(c.id))) push(toolMessage(call as Stored));
  }
  if (input !== undefined) push({ role: "user", content: input });
  else {
    const end = history.at(-1);
    if (end === undefined || (end.role === "assistant" && end.toolCalls === undefined)) {
      return { history, appended, requests, final: end?.content ?? "" };
    }
  }
  for (let calls = 0; ; calls++) {
    if (calls >= maxIterations) return { code: "MAX_ITERATIONS", history, appended, requests };
    requests.push([...history]);
    const evaluated = responses[calls]?.evaluated ?? { valid: true, message: assistant("done") };
    if (!evaluated.valid) {
      return {
        code: "CLIENT_FAILED",
        history,
        appended,
        requests,
        ...(evaluated.cause === undefined ? {} : { cause: evaluated.cause }),
      };
    }
    push(evaluated.message);
    if (evaluated.message.toolCalls === undefined)
      return { history, appended, requests, final: evaluated.message.content };
    for (const call of evaluated.message.toolCalls) push(toolMessage(call as Stored));
  }
}

// ---- checks and counts --------------------------------------------------------------------

const counts = {
  cases: 0,
  /** Runs that ended in a WorkerError (errors counts every WorkerError checked, BUSY probes included). */
  endedInError: 0,
  errors: 0,
  results: 0,
  clientCalls: 0,
  toolMessages: 0,
  toolErrors: 0,
  setHistoryRejected: 0,
  byCode: new Map<string, number>(),
};

function bump(map: Map<string, number>, key: string): void {
  map.set(key, (map.get(key) ?? 0) + 1);
}

/** Fails the case with `what` unless `ok`; plain code because it runs thousands of times. */
function check(ok: boolean, what: () => string): void {
  if (!ok) throw new Error(what());
}

function describeValue(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_k, v: unknown) => (typeof v === "bigint" ? `${v}n` : v))?.slice(0, 400) ?? String(value)
    );
  } catch {
    return "(cyclic)";
  }
}

function isDeepFrozen(value: unknown, seen = new Set<unknown>()): boolean {
  if (typeof value !== "object" || value === null || seen.has(value)) return true;
  seen.add(value);
  if (ArrayBuffer.isView(value)) return true; // typed arrays cannot be frozen
  if (!Object.isFrozen(value)) return false;
  return Reflect.ownKeys(value).every((key) => isDeepFrozen((value as Record<PropertyKey, unknown>)[key], seen));
}

function checkWorkerError(error: unknown, expected: WorkerErrorCode): WorkerError {
  if (!WorkerError.is(error)) throw error;
  check(error.code === expected, () => `expected ${expected}, got ${error.code}: ${error.message}`);
  check(
    CODES.has(error.code) && error.name === "WorkerError" && error.message.length > 0,
    () => `bad error ${error.name} ${error.code}`,
  );
  counts.errors += 1;
  bump(counts.byCode, error.code);
  return error;
}

afterAll(() => {
  const codes = [...counts.byCode.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([code, n]) => `${code} ${n}`);
  console.log(
    `[hostile-input] @insomnia/worker (seed ${SEED}): ${counts.cases} hostile runs: ${counts.endedInError} ended in a WorkerError, ` +
      `${counts.results} in a TurnResult equal to the model (${counts.errors} WorkerErrors checked: ${codes.join(", ")}); ` +
      `${counts.clientCalls} client calls, ` +
      `${counts.toolMessages} tool messages (${counts.toolErrors} isError), ${counts.setHistoryRejected} histories rejected by setHistory`,
  );
});

// ---- one case -----------------------------------------------------------------------------

async function runCase(sc: Scenario): Promise<void> {
  counts.cases += 1;
  const responses: BuiltResponse[] = [];
  for (const spec of sc.responses) responses.push(buildResponse(spec, [...responses]));
  const seen: { systemPrompt: string; messages: Message[]; tools: string[] }[] = [];
  const client: LlmClient = {
    complete(request) {
      seen.push({
        systemPrompt: request.systemPrompt,
        messages: [...request.messages],
        tools: request.tools.map((t) => t.name),
      });
      const response = responses[seen.length - 1];
      return (response === undefined ? { content: "done" } : response.produce(request)) as ReturnType<
        LlmClient["complete"]
      >;
    },
  };
  const worker = new Worker({ client, maxIterations: sc.maxIterations });
  for (const t of TOOLS) worker.tools.register(t.tool);
  const heard: Message[] = [];
  if (sc.listener) worker.addMessageListener((m) => void heard.push(m));

  let prompt: string | undefined;
  if (sc.prompt.kind === "string") {
    prompt = sc.prompt.value;
    worker.setSystemPrompt(prompt);
  } else if (sc.prompt.kind === "non-string") {
    let thrown: unknown;
    try {
      worker.setSystemPrompt({ toString: () => "prompt" } as unknown as string);
    } catch (error) {
      thrown = error;
    }
    checkWorkerError(thrown, "INVALID_ARGUMENT");
  }
  check(worker.getSystemPrompt() === prompt, () => "getSystemPrompt differs from the prompt set");

  let initial: Message[] = [];
  if (sc.history !== undefined) {
    const built = sc.history.map(buildHistoryMessage);
    const invalid = built.findIndex((b) => typeof b.expected === "string");
    let thrown: unknown;
    try {
      worker.setHistory(built.map((b) => b.raw) as Message[]);
    } catch (error) {
      thrown = error;
    }
    if (invalid === -1) {
      check(thrown === undefined, () => `setHistory refused a valid history: ${String(thrown)}`);
      initial = built.map((b) => b.expected as Message);
    } else {
      const e = checkWorkerError(thrown, "INVALID_ARGUMENT");
      check(
        e.message.includes(`message ${invalid}`),
        () => `setHistory error does not name message ${invalid}: ${e.message}`,
      );
      counts.setHistoryRejected += 1;
    }
    check(
      isDeepStrictEqual(worker.getHistory(), initial),
      () => `history after setHistory: ${describeValue(worker.getHistory())}`,
    );
  }

  if (sc.action.kind === "run-non-string") {
    let thrown: unknown;
    try {
      await worker.run(42 as unknown as string);
    } catch (error) {
      thrown = error;
    }
    checkWorkerError(thrown, "INVALID_ARGUMENT");
    counts.endedInError += 1;
    check(
      seen.length === 0 && isDeepStrictEqual(worker.getHistory(), initial),
      () => "a refused run() changed something",
    );
    return;
  }

  const input = sc.action.kind === "run" ? sc.action.input : undefined;
  const pending = input === undefined ? worker.resume() : worker.run(input);
  check(worker.busy, () => "not busy during a run");
  let busyError: unknown;
  try {
    worker.setHistory([]);
  } catch (error) {
    busyError = error;
  }
  checkWorkerError(busyError, "BUSY");

  let result: TurnResult | undefined;
  let thrown: unknown;
  try {
    result = await pending;
  } catch (error) {
    thrown = error;
  }
  counts.clientCalls += seen.length;
  check(!worker.busy, () => "still busy after the run settled");
  check(seen.length <= sc.maxIterations, () => `${seen.length} client calls > maxIterations ${sc.maxIterations}`);

  if (prompt === undefined) {
    checkWorkerError(thrown, "NO_SYSTEM_PROMPT");
    counts.endedInError += 1;
    check(
      seen.length === 0 && isDeepStrictEqual(worker.getHistory(), initial),
      () => "NO_SYSTEM_PROMPT changed something",
    );
    return;
  }

  const model = simulate(initial, input, sc.maxIterations, responses);
  if (model.code === undefined && thrown !== undefined) {
    if (WorkerError.is(thrown))
      throw new Error(`WorkerError ${thrown.code} (${thrown.message}), the model says a result`);
    throw thrown;
  }
  const history = worker.getHistory();
  check(
    seen.length === model.requests.length,
    () => `${seen.length} client calls, model says ${model.requests.length}`,
  );
  for (const [i, request] of seen.entries()) {
    check(request.systemPrompt === prompt, () => `request ${i} had another system prompt`);
    check(isDeepStrictEqual(request.tools, TOOL_NAMES_SORTED), () => `request ${i} tools: ${request.tools.join(",")}`);
    check(
      isDeepStrictEqual(request.messages, model.requests[i]),
      () => `request ${i} messages:\n${describeValue(request.messages)}\n${describeValue(model.requests[i])}`,
    );
  }
  check(
    isDeepStrictEqual(
      history.map((m) => m.role),
      model.history.map((m) => m.role),
    ),
    () => `roles ${history.map((m) => m.role).join(",")} vs model ${model.history.map((m) => m.role).join(",")}`,
  );
  check(
    isDeepStrictEqual(history, model.history),
    () => `history:\n${describeValue(history)}\nmodel:\n${describeValue(model.history)}`,
  );
  check(isDeepFrozen(history), () => "a history message is not deep-frozen");
  if (sc.listener)
    check(isDeepStrictEqual(heard, model.appended), () => "the listener heard other messages than were appended");
  for (const m of model.appended) {
    if (m.role !== "tool") continue;
    counts.toolMessages += 1;
    if (m.isError === true) counts.toolErrors += 1;
  }

  if (model.code !== undefined) {
    check(result === undefined, () => `resolved, the model says ${model.code}`);
    const e = checkWorkerError(thrown, model.code);
    counts.endedInError += 1;
    if (model.cause !== undefined)
      check(Object.is(e.cause, model.cause.value), () => "CLIENT_FAILED does not carry the thrown value as cause");
    return;
  }
  if (result === undefined) {
    if (WorkerError.is(thrown))
      throw new Error(`WorkerError ${thrown.code} (${thrown.message}), the model says a result`);
    throw thrown;
  }
  counts.results += 1;
  check(result.final === model.final, () => `final ${describeValue(result.final)} vs ${describeValue(model.final)}`);
  check(result.iterations === seen.length, () => `iterations ${result.iterations} vs ${seen.length} client calls`);
  check(isDeepStrictEqual(result.messages, model.appended), () => "result.messages differ from the appended messages");
}

describe("the worker under a hostile client, hostile tools and hostile histories", () => {
  it("generated_runs_end_in_a_WorkerError_or_the_modelled_history", async () => {
    const { printed, rejections } = await guarded(async () => {
      await fc.assert(fc.asyncProperty(scenarioArb, runCase), { seed: SEED, numRuns: RUNS });
    });
    expect(printed).toEqual([]);
    expect(rejections).toEqual([]);
    expect(counts.cases).toBe(RUNS);
    expect(counts.endedInError + counts.results).toBe(RUNS);
    // Not vacuous: every outcome the generator aims at happened.
    for (const code of ["CLIENT_FAILED", "MAX_ITERATIONS", "INVALID_ARGUMENT", "BUSY", "NO_SYSTEM_PROMPT"]) {
      expect([code, counts.byCode.get(code) ?? 0]).not.toEqual([code, 0]);
    }
    expect(counts.results).toBeGreaterThan(RUNS / 5);
    expect(counts.toolErrors).toBeGreaterThan(RUNS / 60);
    expect(counts.toolMessages - counts.toolErrors).toBeGreaterThan(RUNS / 60);
    expect(counts.setHistoryRejected).toBeGreaterThan(RUNS / 120);
  });
});

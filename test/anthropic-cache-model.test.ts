// The bench's model of Anthropic's prompt cache (bench/anthropic-cache-model.mjs) on hand-made
// requests: a token is a character here, so every expected figure can be read off the texts.
import { describe, expect, test } from "vitest";
// @ts-expect-error: a plain ES module of the bench, without type declarations.
import { AnthropicPromptCache, blockText, cacheUsage, LOOKBACK_BLOCKS } from "../bench/anthropic-cache-model.mjs";
// @ts-expect-error: a plain ES module of the bench, without type declarations.
import { withoutToolsAndSystem } from "../bench/opencode-reference.mjs";

type Block = Record<string, unknown>;
type Body = Record<string, unknown>;
const BP = { type: "ephemeral" };
const countTokens = (text: string): number => text.length;

/** A text block of `n` tokens; `bp` gives it a cache breakpoint. */
const text = (n: number, fill = "a", bp = false): Block => ({
  type: "text",
  text: fill.repeat(n),
  ...(bp ? { cache_control: BP } : {}),
});
const system = (n: number, fill = "s"): Block[] => [text(n, fill, true)];
/** A request as the pod sends it: system breakpoint, then messages with a breakpoint on the last block. */
function request(messages: { role: string; content: Block[] }[], extra: Body = {}): Body {
  const last = messages.at(-1)!;
  const content = [...last.content];
  content[content.length - 1] = { ...content.at(-1), cache_control: BP };
  return {
    model: "claude-sonnet-4-5",
    system: system(1000),
    messages: [...messages.slice(0, -1), { ...last, content }],
    ...extra,
  };
}
const user = (...content: Block[]) => ({ role: "user", content });
const assistant = (...content: Block[]) => ({ role: "assistant", content });
const options = { countTokens, minimumTokens: () => 100 };

describe("anthropic cache model", () => {
  test("a conversation that only appends reads the previous request's prefix and writes what it added", () => {
    const first = [user(text(10, "u"))];
    const second = [...first, assistant(text(20, "b")), user(text(30, "c"))];
    expect(cacheUsage([request(first), request(second)], options)).toEqual([
      { input: 0, cacheRead: 0, cacheWrite: 1010 },
      { input: 0, cacheRead: 1010, cacheWrite: 50 },
    ]);
  });

  test("input is what comes after the last breakpoint, and the three add up to the prompt", () => {
    const body = request([user(text(10, "u"))]);
    (body.messages as { content: Block[] }[])[0]!.content.push(text(7, "t"));
    const [usage] = cacheUsage([body], options);
    expect(usage).toEqual({ input: 7, cacheRead: 0, cacheWrite: 1010 });
  });

  test("a prefix shorter than the minimum is neither written nor read, and no error is raised", () => {
    const short = { ...request([user(text(10, "u"))]), system: system(50) };
    const grown = {
      ...request([user(text(10, "u")), assistant(text(20, "b")), user(text(30, "c"))]),
      system: system(50),
    };
    expect(cacheUsage([short, short, grown, grown], options)).toEqual([
      { input: 60, cacheRead: 0, cacheWrite: 0 },
      { input: 60, cacheRead: 0, cacheWrite: 0 },
      // 110 tokens reach the minimum at the last breakpoint; the system breakpoint (50) never does.
      { input: 0, cacheRead: 0, cacheWrite: 110 },
      { input: 0, cacheRead: 110, cacheWrite: 0 },
    ]);
  });

  test(`the lookback finds a prefix cached ${LOOKBACK_BLOCKS} blocks before the breakpoint`, () => {
    const first = [user(text(10, "u"))];
    // 20 blocks more: 10 assistant/user pairs.
    const added = Array.from({ length: LOOKBACK_BLOCKS / 2 }, (_, i) => [
      assistant(text(1, String.fromCharCode(65 + i))),
      user(text(1, String.fromCharCode(97 + i))),
    ]).flat();
    const [, usage] = cacheUsage([request(first), request([...first, ...added])], options);
    expect(usage).toEqual({ input: 0, cacheRead: 1010, cacheWrite: 20 });
  });

  test(`one block past the lookback the prefix is not found: only tools and system are read`, () => {
    const first = [user(text(10, "u"))];
    const added = Array.from({ length: LOOKBACK_BLOCKS / 2 }, (_, i) => [
      assistant(text(1, String.fromCharCode(65 + i))),
      user(text(1, String.fromCharCode(97 + i))),
    ]).flat();
    const [, usage] = cacheUsage([request(first), request([...first, ...added, assistant(text(1, "z"))])], options);
    expect(usage).toEqual({ input: 0, cacheRead: 1000, cacheWrite: 31 });
  });

  test("message boundaries are part of the prefix: the same texts split into other messages are not a hit", () => {
    const joined = request([user(text(10, "u"), text(20, "b"))]);
    const split = request([user(text(10, "u")), assistant(text(20, "b")), user(text(5, "c"))]);
    // Only the system prompt is read: the 30 tokens cached as one user message are not the prefix here.
    expect(cacheUsage([joined, split], options)[1]).toEqual({ input: 0, cacheRead: 1000, cacheWrite: 35 });
    const same = request([user(text(10, "u"), text(20, "b")), assistant(text(5, "c"))]);
    expect(cacheUsage([joined, same], options)[1]).toEqual({ input: 0, cacheRead: 1030, cacheWrite: 5 });
  });

  test("a changed byte in the system prompt invalidates the system and every message after it", () => {
    const messages = [user(text(10, "u"))];
    const changed = { ...request(messages), system: system(1000, "S") };
    expect(cacheUsage([request(messages), changed], options)[1]).toEqual({ input: 0, cacheRead: 0, cacheWrite: 1010 });
  });

  test("tools come first: a changed tool definition invalidates everything, the same tools keep it", () => {
    const tool = (description: string) => ({ name: "read_file", description, input_schema: { type: "object" } });
    const messages = [user(text(10, "u"))];
    const toolTokens = blockText("tools", tool("Reads."));
    const [first, same, changed] = cacheUsage(
      [
        request(messages, { tools: [tool("Reads.")] }),
        request(messages, { tools: [tool("Reads.")] }),
        request(messages, { tools: [tool("Reads!")] }),
      ],
      options,
    );
    expect(first).toEqual({ input: 0, cacheRead: 0, cacheWrite: toolTokens.length + 1010 });
    expect(same).toEqual({ input: 0, cacheRead: toolTokens.length + 1010, cacheWrite: 0 });
    expect(changed).toEqual({ input: 0, cacheRead: 0, cacheWrite: toolTokens.length + 1010 });
  });

  test("a changed tool_choice keeps tools and system cached but not the messages", () => {
    const messages = [user(text(10, "u"))];
    const usage = cacheUsage([request(messages), request(messages, { tool_choice: { type: "any" } })], options);
    expect(usage[1]).toEqual({ input: 0, cacheRead: 1000, cacheWrite: 10 });
  });

  test("the summary request without tools and system prompt (OpenCode's) reads nothing of the conversation", () => {
    const tool = { name: "read_file", description: "Reads.", input_schema: { type: "object" } };
    const conversation = [user(text(100, "u")), assistant(text(20, "b"))];
    const ours = request([...conversation, user(text(5, "i"))], { tools: [tool], tool_choice: { type: "auto" } });
    const opencode = withoutToolsAndSystem(ours);
    expect(Object.keys(opencode).sort()).toEqual(["messages", "model"]);
    const before = request(conversation, { tools: [tool], tool_choice: { type: "auto" } });
    const [, withPrefix] = cacheUsage([before, ours], options);
    const [, withoutPrefix] = cacheUsage([before, opencode], options);
    expect(withPrefix).toEqual({
      input: 0,
      cacheRead: blockText("tools", tool).length + 1120,
      cacheWrite: 5,
    });
    // Its own prefix is new: all of it is written again.
    expect(withoutPrefix).toEqual({ input: 0, cacheRead: 0, cacheWrite: 125 });
  });

  test("an entry lives 5 minutes from its last use; 1h breakpoints live an hour", () => {
    const body = request([user(text(10, "u"))]);
    const minute = 60_000;
    expect(
      cacheUsage(
        [
          { body, at: 0 },
          { body, at: 4 * minute },
          { body, at: 8 * minute }, // refreshed at 4 min, so still there
          { body, at: 13 * minute + 1 }, // 5 min after 8 min have passed
        ],
        options,
      ).map((u: { cacheRead: number }) => u.cacheRead),
    ).toEqual([0, 1010, 1010, 0]);
    const hour = {
      ...body,
      system: [{ ...text(1000, "s"), cache_control: { type: "ephemeral", ttl: "1h" } }],
    };
    const reads = cacheUsage(
      [
        { body: hour, at: 0 },
        { body: hour, at: 30 * minute },
      ],
      options,
    ).map((u: { cacheRead: number }) => u.cacheRead);
    // The system prefix (1h) survives 30 minutes; the message breakpoint (5m) does not.
    expect(reads).toEqual([0, 1000]);
  });

  test("a top-level cache_control puts the breakpoint on the last block", () => {
    const body = { model: "m", system: "x".repeat(200), messages: [user(text(10, "u"))], cache_control: BP };
    expect(cacheUsage([body, body], options)).toEqual([
      { input: 0, cacheRead: 0, cacheWrite: 210 },
      { input: 0, cacheRead: 210, cacheWrite: 0 },
    ]);
  });

  test("more than 4 breakpoints is refused, as the API does", () => {
    const body = request([user(text(200, "a", true), text(1, "b", true), text(1, "c", true), text(1, "d"))]);
    expect(() => new AnthropicPromptCache(options).apply(body)).toThrow(/5 cache breakpoints/);
  });

  test("tool calls and results are counted from their content", () => {
    expect(blockText("messages", { type: "tool_use", id: "t1", name: "read_file", input: { path: "a" } })).toBe(
      '{"name":"read_file","input":{"path":"a"}}',
    );
    expect(blockText("messages", { type: "tool_result", tool_use_id: "t1", content: "abc", cache_control: BP })).toBe(
      "abc",
    );
    expect(
      blockText("messages", { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "ab" }] }),
    ).toBe("ab");
  });
});

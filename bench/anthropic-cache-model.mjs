// A model of Anthropic's prompt cache, applied to request bodies exactly as they left the
// machine (the Messages API JSON the fake provider records). It follows the documented rules
// (platform.claude.com/docs/en/build-with-claude/prompt-caching):
//
// - The cached prefix is the request in the order tools → system → messages, up to and
//   including a block that carries `cache_control` (a breakpoint; at most 4 per request, or a
//   top-level `cache_control`, which puts one on the last block).
// - A breakpoint reads the longest cached prefix that ends at it or at one of the 20 block
//   boundaries before it (the lookback); a prefix cached further back is not found.
// - The prefix up to a breakpoint is written to the cache only when it is at least the model's
//   minimum cacheable length; shorter prompts are sent uncached, without an error.
// - An entry lives 5 minutes (or 1 hour with `ttl: "1h"`) from its last read or write.
// - Usage adds up: cache_read_input_tokens + cache_creation_input_tokens + input_tokens is the
//   whole prompt; input_tokens is what was neither read from nor written to the cache.
//
// What a block's identity is: its JSON without `cache_control` (moving a breakpoint does not
// change the cached content), with the section, the message role and whether it opens a new
// message. `model` keys the whole cache; `tool_choice` and `thinking` key the messages, since
// changing them invalidates the message cache but not tools and system.
import { createHash } from "node:crypto";

/** How many block boundaries before a breakpoint are checked for a cached prefix. */
export const LOOKBACK_BLOCKS = 20;
/** Breakpoints one request may carry (more is a 400 from the API). */
export const MAX_BREAKPOINTS = 4;
/** Lifetimes of a cache entry, from its last use. */
export const TTL_MS = Object.freeze({ "5m": 5 * 60_000, "1h": 60 * 60_000 });

const withoutCacheControl = ({ cache_control, ...rest }) => rest;

/** The text a block's tokens are counted from: its text where it has one, else its JSON. */
export function blockText(section, block) {
  if (section === "tools") return JSON.stringify(withoutCacheControl(block));
  switch (block.type) {
    case "text":
      return block.text;
    case "tool_use":
      return JSON.stringify({ name: block.name, input: block.input });
    case "tool_result":
      return typeof block.content === "string"
        ? block.content
        : (block.content ?? []).map((part) => (part.type === "text" ? part.text : JSON.stringify(part))).join("");
    case "thinking":
      return block.thinking;
    case "redacted_thinking":
      return block.data;
    default:
      return JSON.stringify(withoutCacheControl(block));
  }
}

/** The request's blocks in cache order, each as `{ section, role, opens, block }`. */
function orderedBlocks(body) {
  const out = [];
  for (const tool of body.tools ?? []) out.push({ section: "tools", block: tool });
  const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
  for (const block of system) out.push({ section: "system", block });
  for (const message of body.messages ?? []) {
    const content = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
    content.forEach((block, i) => {
      out.push({ section: "messages", role: message.role, opens: i === 0, block });
    });
  }
  return out;
}

/**
 * The request as the cache sees it: per block in cache order, the key of the prefix that ends
 * with it, the prefix's length in tokens and its breakpoint's TTL (undefined: no breakpoint).
 */
export function prefixBlocks(body, countTokens) {
  const blocks = orderedBlocks(body);
  if (body.cache_control !== undefined && blocks.length > 0) {
    const last = blocks[blocks.length - 1];
    last.block = { ...last.block, cache_control: body.cache_control };
  }
  let key = createHash("sha256").update(`model ${body.model}`).digest("hex");
  let tokens = 0;
  let messagesKeyed = false;
  const out = [];
  for (const { section, role, opens, block } of blocks) {
    if (section === "messages" && !messagesKeyed) {
      messagesKeyed = true;
      key = hash(key, `options ${JSON.stringify([body.tool_choice ?? null, body.thinking ?? null])}`);
    }
    key = hash(key, `${section} ${role ?? ""} ${opens ? "opens" : ""} ${JSON.stringify(withoutCacheControl(block))}`);
    tokens += countTokens(blockText(section, block));
    const ttl = block.cache_control === undefined ? undefined : (block.cache_control.ttl ?? "5m");
    if (ttl !== undefined && !Object.hasOwn(TTL_MS, ttl)) throw new Error(`cache_control.ttl ${ttl} is not 5m or 1h`);
    out.push({ key, tokens, ttl });
  }
  const breakpoints = out.filter((b) => b.ttl !== undefined).length;
  if (breakpoints > MAX_BREAKPOINTS) {
    throw new Error(`a request carries ${breakpoints} cache breakpoints; Anthropic accepts at most ${MAX_BREAKPOINTS}`);
  }
  return out;
}

const hash = (previous, text) => createHash("sha256").update(previous).update("\n").update(text).digest("hex");

/**
 * One cache, fed requests in the order they were sent. `countTokens(text)` estimates tokens;
 * `minimumTokens(model)` is the model's smallest cacheable prompt (undefined: caches any length).
 */
export class AnthropicPromptCache {
  #entries = new Map();
  #countTokens;
  #minimumTokens;

  constructor({ countTokens, minimumTokens = () => undefined }) {
    this.#countTokens = countTokens;
    this.#minimumTokens = minimumTokens;
  }

  /** The usage Anthropic would report for `body` sent at `at` (ms), and the cache after it. */
  apply(body, at = 0) {
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= at) this.#entries.delete(key);
    const blocks = prefixBlocks(body, this.#countTokens);
    const total = blocks.at(-1)?.tokens ?? 0;
    const minimum = this.#minimumTokens(body.model) ?? 0;
    const breakpoints = blocks.flatMap((b, i) => (b.ttl === undefined ? [] : [i]));

    let readAt = -1;
    for (const p of breakpoints) {
      for (let j = p; j >= Math.max(0, p - LOOKBACK_BLOCKS); j--) {
        if (this.#entries.has(blocks[j].key)) {
          readAt = Math.max(readAt, j);
          break;
        }
      }
    }
    // Every cached prefix of what was read is in use: each is refreshed.
    for (let j = 0; j <= readAt; j++) {
      const entry = this.#entries.get(blocks[j].key);
      if (entry !== undefined) entry.expiresAt = Math.max(entry.expiresAt, at + entry.ttlMs);
    }
    let writtenTo = -1;
    for (const p of breakpoints) {
      if (blocks[p].tokens < minimum) continue;
      const ttlMs = TTL_MS[blocks[p].ttl];
      const entry = this.#entries.get(blocks[p].key);
      if (entry === undefined) this.#entries.set(blocks[p].key, { ttlMs, expiresAt: at + ttlMs });
      else entry.expiresAt = Math.max(entry.expiresAt, at + ttlMs);
      writtenTo = Math.max(writtenTo, p);
    }
    const cacheRead = readAt === -1 ? 0 : blocks[readAt].tokens;
    const cacheWrite = writtenTo > readAt ? blocks[writtenTo].tokens - cacheRead : 0;
    return { input: total - cacheRead - cacheWrite, cacheRead, cacheWrite };
  }
}

/**
 * Per request, `{ input, cacheRead, cacheWrite }` as Anthropic would report them, for a
 * sequence of request bodies (or `{ body, at }` with the time sent in ms) fed to a new cache.
 */
export function cacheUsage(requests, options) {
  const cache = new AnthropicPromptCache(options);
  return requests.map((r) => (r.body === undefined ? cache.apply(r) : cache.apply(r.body, r.at)));
}

/** Sums of the usage figures of several requests. */
export function sumUsage(usages) {
  const sum = { input: 0, cacheRead: 0, cacheWrite: 0 };
  for (const u of usages) {
    sum.input += u.input;
    sum.cacheRead += u.cacheRead;
    sum.cacheWrite += u.cacheWrite;
  }
  return { ...sum, total: sum.input + sum.cacheRead + sum.cacheWrite };
}

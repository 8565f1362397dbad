// The Anthropic Messages stream the process benchmarks' local servers answer with: `pod run`
// always streams, so each of them speaks these server-sent events.

/** One server-sent event. */
export const sse = (event, data) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** The events before the first text delta: message_start and an empty text block. */
export function anthropicStreamHead(usage = { input_tokens: 1, output_tokens: 1 }) {
  return (
    sse("message_start", {
      type: "message_start",
      message: {
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-5",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage,
      },
    }) +
    sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } })
  );
}

/** One text delta of block 0. */
export const anthropicTextDelta = (text) =>
  sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } });

/** The events after the last text delta: the block's end and the message's. */
export function anthropicStreamTail(outputTokens = 1) {
  return (
    sse("content_block_stop", { type: "content_block_stop", index: 0 }) +
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: outputTokens },
    }) +
    sse("message_stop", { type: "message_stop" })
  );
}

/** A whole one-text answer, streamed. */
export const anthropicStream = (text) => anthropicStreamHead() + anthropicTextDelta(text) + anthropicStreamTail();

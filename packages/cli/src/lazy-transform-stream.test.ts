import { describe, expect, test } from "vitest";
import { LazyTransformStream } from "./lazy-transform-stream.ts";

async function readAll(stream: ReadableStream<string>): Promise<string[]> {
  const chunks: string[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

describe("LazyTransformStream", () => {
  test("a_subclass_is_nodes_transform_stream_with_its_own_prototype", async () => {
    class Upper extends LazyTransformStream<string, string> {
      constructor() {
        super({ transform: (chunk, controller) => controller.enqueue(chunk.toUpperCase()) });
      }
      shout(): string {
        return "!";
      }
    }
    const upper = new Upper();
    expect(upper).toBeInstanceOf(Upper);
    expect(upper).toBeInstanceOf(globalThis.TransformStream);
    expect(upper).toBeInstanceOf(LazyTransformStream);
    expect(upper.shout()).toBe("!");
    expect(Object.prototype.toString.call(upper)).toBe("[object TransformStream]");
    const source = new ReadableStream<string>({
      start(controller) {
        controller.enqueue("a");
        controller.enqueue("b");
        controller.close();
      },
    });
    expect(await readAll(source.pipeThrough(upper))).toEqual(["A", "B"]);
  });

  test("constructed_directly_it_is_nodes_and_node_checks_its_state", async () => {
    const stream = new LazyTransformStream<number, number>({ transform: (n, c) => c.enqueue(n * 2) });
    expect(stream).toBeInstanceOf(globalThis.TransformStream);
    expect(new globalThis.TransformStream()).toBeInstanceOf(LazyTransformStream);
    const writer = stream.writable.getWriter();
    void writer.write(21);
    void writer.close();
    const reader = stream.readable.getReader();
    expect((await reader.read()).value).toBe(42);
    // Node's getters check the receiver: an object that only inherits the prototype is refused.
    const fake = Object.create(LazyTransformStream.prototype) as TransformStream;
    expect(() => fake.readable).toThrow(TypeError);
    expect(() => (LazyTransformStream as unknown as () => unknown)()).toThrow(TypeError);
  });
});

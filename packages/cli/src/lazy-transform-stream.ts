/*
 * The `TransformStream` of the `pod` bin's bundles (vendor-globals.ts): Node's own, loaded when
 * the first one is made. Node defines its global TransformStream lazily, and the first touch
 * loads its web streams (the three stream modules and what they need). The AI SDK providers'
 * bundles touch it as they load, to declare a subclass (eventsource-parser's
 * EventSourceParserStream, for streamed answers), and that load was a few percent of a
 * `pod run`'s instructions before its first request. This stand-in can be subclassed without
 * loading anything; constructing it (or a subclass) constructs Node's TransformStream, with
 * the subclass's prototype, so what is made is Node's stream in every respect: its internal
 * state, its `readable` and `writable`, `instanceof` either class. (The web streams are then
 * loaded while the first request waits for its answer: http-fetch.ts.)
 */

type TransformStreamClass = typeof globalThis.TransformStream;

let node: TransformStreamClass | undefined;

/** Node's TransformStream; on first use the stand-in's prototype is made to inherit from its. */
function nodeTransformStream(): TransformStreamClass {
  if (node === undefined) {
    node = globalThis.TransformStream;
    Object.setPrototypeOf(LazyTransformStream.prototype, node.prototype);
  }
  return node;
}

function TransformStream(this: unknown, ...args: unknown[]): object {
  if (new.target === undefined)
    throw new TypeError("Class constructor TransformStream cannot be invoked without 'new'");
  return Reflect.construct(nodeTransformStream(), args, new.target) as object;
}

/** A TransformStream class that loads Node's only when one is constructed. */
export const LazyTransformStream = TransformStream as unknown as TransformStreamClass;

Object.defineProperty(LazyTransformStream, Symbol.hasInstance, {
  value: (value: unknown) => value instanceof nodeTransformStream(),
});

/*
 * Globals the `pod` bin's bundles get from here instead of from Node: the build injects this
 * file (esbuild `inject`), so each free use of the name in the bundled code, the providers'
 * included, is this export. See fetch-headers.ts and lazy-transform-stream.ts for why.
 */
export { FetchHeaders as Headers } from "./fetch-headers.ts";
export { LazyTransformStream as TransformStream } from "./lazy-transform-stream.ts";

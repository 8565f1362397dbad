export {
  readTextInsideRoot,
  type ReadInsideRootOptions,
  type ReadInsideRootResult,
  type ReadRefusal,
  type TextInsideRoot,
} from "./read-text-inside-root.ts";
export { resolveRoot, type ResolvedRoot, type ResolveRootResult } from "./resolved-root.ts";
export { readSmallFile, type ReadSmallFileOptions } from "./read-small-file.ts";
export { decodeUtf8Text, type DecodedText } from "./decode-utf8-text.ts";
export { bytePosition, completeUtf8Length, firstInvalidUtf8Offset, utf8Boundary } from "./utf8.ts";
export { isSameOrInside, isStrictlyInside, pathSegments, segmentsWithin } from "./path-containment.ts";
export { openedPath, readUpTo } from "./bounded-read.ts";

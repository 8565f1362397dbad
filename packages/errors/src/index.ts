export {
  type ErrorLocation,
  formatErrorLocation,
  formatErrorMessage,
  hasBrand,
  InsomniaError,
  type InsomniaErrorOptions,
  setProblems,
} from "./insomnia-error.ts";
export { type ErrorJson, errorToJson } from "./error-json.ts";
export { errorText } from "./error-text.ts";
export { didYouMean, didYouMeanSuffix, editDistance } from "./did-you-mean.ts";
export { isSameOrInside, isStrictlyInside, pathSegments, segmentsWithin } from "./path-containment.ts";
export { openedPath, readCapped, readUpTo } from "./bounded-read.ts";
export { firstInvalidUtf8Offset } from "./utf8.ts";
export { REDACTED, redactSecrets } from "./redact-secrets.ts";

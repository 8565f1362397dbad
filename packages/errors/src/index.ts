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
export { REDACTED, redactSecrets } from "./redact-secrets.ts";

/** One problem `pod check` (or a failing command) reports. */
export interface Problem {
  /** Absolute path of the file, or a prompt reference when no file was found. */
  file?: string;
  /** 1-based line in `file`. */
  line?: number;
  /** 1-based column in `file`. */
  column?: number;
  /** The error or warning code, e.g. `UNKNOWN_KEY`. */
  code: string;
  /** The code of the underlying loader error, e.g. `NOT_FOUND` for an `INCLUDE_FAILED`. */
  cause?: string;
  /** What is wrong and what to do, without the location prefix. */
  message: string;
  severity: "error" | "warning";
}

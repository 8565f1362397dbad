import { SegmentStoreError } from "@insomnia/segment-store";

// SQLSTATEs that mean the connection or the server went away, not that the statement was refused:
// shutdowns, cannot connect now, the database dropped, a session or idle-transaction timeout
// (the server ends the session: FATAL), too many connections, an I/O error.
const CONNECTION_STATES = new Set(["57P01", "57P02", "57P03", "57P04", "57P05", "25P03", "53300", "58030"]);

/** True when `error` says the connection broke (or never formed), not that the database refused a statement. */
export function isConnectionError(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return true;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  // A DatabaseError carries the server's severity and a 5-character SQLSTATE.
  if (typeof severity === "string" && typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) {
    return code.startsWith("08") || CONNECTION_STATES.has(code);
  }
  return true;
}

/** The SQLSTATE of a database error, or `undefined`. */
export function sqlState(error: unknown): string | undefined {
  if (typeof error !== "object" || error === null) return undefined;
  const { code, severity } = error as { code?: unknown; severity?: unknown };
  return typeof severity === "string" && typeof code === "string" ? code : undefined;
}

/** Text of an underlying error for a message: its message, or its string form. */
export function causeText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/** A `SEGMENT_UNAVAILABLE` error for an operation that did not reach the database or lost it. */
export function unavailable(what: string, cause: unknown, durable?: boolean | "unknown"): SegmentStoreError {
  if (SegmentStoreError.is(cause)) return cause;
  const next =
    durable === false
      ? "nothing was written; try again once PostgreSQL is reachable"
      : durable === "unknown"
        ? "whether it was written could not be learned; append the same record again once PostgreSQL is reachable (it is written at most once)"
        : "check that PostgreSQL is running and reachable, then try again";
  return new SegmentStoreError(
    "SEGMENT_UNAVAILABLE",
    `${what}: PostgreSQL is unavailable (${causeText(cause)}); ${next}`,
    {
      cause,
      durable,
    },
  );
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

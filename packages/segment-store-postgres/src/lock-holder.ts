import type { SegmentLockHolder } from "@insomnia/segment-store";

/** A lease holder row (segment or pod) as a `SEGMENT_LOCKED` error's `lock` field. */
export function lockHolder(row: {
  writer_host: string | null;
  writer_pid: number | null;
  expires: string | null;
  remaining_ms: string | null;
}): SegmentLockHolder {
  const remaining = row.remaining_ms === null ? undefined : Math.max(0, Math.ceil(Number(row.remaining_ms)));
  const expires = row.expires === null ? undefined : new Date(row.expires);
  return {
    ...(row.writer_pid === null ? {} : { pid: row.writer_pid }),
    ...(row.writer_host === null ? {} : { host: row.writer_host }),
    ...(expires === undefined || Number.isNaN(expires.getTime()) ? {} : { expiresAt: expires.toISOString() }),
    ...(remaining === undefined || Number.isNaN(remaining) ? {} : { retryAfterMs: remaining }),
  };
}

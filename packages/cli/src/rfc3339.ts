const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** Parses an RFC 3339 date-time (`2026-01-02T03:04:05Z`, offsets allowed); undefined when invalid. */
export function parseRfc3339(text: string): Date | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, year, month, day, hour, minute, second, , offset] = m;
  const date = new Date(text.replace(" ", "T"));
  if (Number.isNaN(date.getTime())) return undefined;
  // Date accepts 2026-02-30 and rolls it over; a typo must not silently become another day.
  const probe = new Date(
    Date.UTC(Number(year), Number(month) - 1, Number(day), Number(hour), Number(minute), Number(second)),
  );
  const valid =
    probe.getUTCFullYear() === Number(year) &&
    probe.getUTCMonth() === Number(month) - 1 &&
    probe.getUTCDate() === Number(day) &&
    probe.getUTCHours() === Number(hour) &&
    probe.getUTCMinutes() === Number(minute) &&
    probe.getUTCSeconds() === Number(second);
  if (!valid) return undefined;
  if (offset !== undefined && offset.length === 6) {
    const [oh, om] = offset.slice(1).split(":").map(Number);
    if (oh === undefined || om === undefined || oh > 23 || om > 59) return undefined;
  }
  return date;
}

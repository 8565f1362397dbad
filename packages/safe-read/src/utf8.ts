/**
 * Offset of the first byte that starts an ill-formed UTF-8 sequence (overlongs, surrogates and
 * code points above U+10FFFF are ill-formed, as for a fatal `TextDecoder`), or `undefined` when
 * every byte is valid. For saying where a file stops being UTF-8.
 */
export function firstInvalidUtf8Offset(bytes: Uint8Array): number | undefined {
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i] ?? 0;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0; // overlong
      if (b === 0xed) hi = 0x9f; // surrogates
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90; // overlong
      if (b === 0xf4) hi = 0x8f; // above U+10FFFF
    } else return i;
    for (let k = 1; k <= need; k++) {
      const c = bytes[i + k];
      if (c === undefined || c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return i;
    }
    i += need + 1;
  }
  return undefined;
}

/** Length of `bytes` without a trailing incomplete UTF-8 sequence (at most 3 bytes are dropped): where a cut may fall. */
export function completeUtf8Length(bytes: Uint8Array): number {
  let i = bytes.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && ((bytes[i] ?? 0) & 0xc0) === 0x80) {
    i -= 1;
    continuation += 1;
  }
  if (i < 0) return bytes.length;
  const lead = bytes[i] ?? 0;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > continuation ? i : bytes.length;
}

/** 1-based line and byte column of a byte offset (lines end at LF). */
export function bytePosition(bytes: Uint8Array, offset: number): { line: number; column: number } {
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < offset && i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: offset - lineStart + 1 };
}

/** The largest length <= `limit` that does not end inside a UTF-8 character of `bytes`. */
export function utf8Boundary(bytes: Uint8Array, limit: number): number {
  return completeUtf8Length(bytes.subarray(0, Math.max(0, Math.min(limit, bytes.length))));
}

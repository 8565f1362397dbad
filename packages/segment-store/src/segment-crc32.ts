/*
 * CRC-32 (ISO-HDLC: polynomial 0xedb88320 reflected, initial value and final xor 0xffffffff),
 * the same function as `node:zlib`'s `crc32`, over a byte range of a buffer. Slice-by-8 in
 * plain JavaScript: on the restore path one native `crc32` call per line costs more than the
 * sum itself (a `subarray` per line plus the call into C++ for ~200 bytes), and this needs
 * neither — nor does it load `node:zlib`, so a process that never touches its log pays nothing.
 */

let tables: Int32Array | undefined;

/** The eight 256-entry tables of slice-by-8, one after the other; built on first use. */
function crcTables(): Int32Array {
  if (tables !== undefined) return tables;
  const t = new Int32Array(8 * 256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c;
  }
  // Table k gives the CRC of a byte followed by k zero bytes.
  for (let k = 1; k < 8; k++) {
    for (let n = 0; n < 256; n++) {
      const prev = t[(k - 1) * 256 + n] as number;
      t[k * 256 + n] = (prev >>> 8) ^ (t[prev & 0xff] as number);
    }
  }
  tables = t;
  return t;
}

/**
 * CRC-32 of `bytes[start..end)` continuing from `crc` (the value returned for the bytes
 * before them; 0 to start), as `zlib.crc32(bytes.subarray(start, end), crc)`. Returns an
 * unsigned 32-bit integer.
 */
export function crc32Update(crc: number, bytes: Uint8Array, start: number, end: number): number {
  const t = crcTables();
  let c = ~crc;
  let i = start;
  for (const last = end - 8; i <= last; i += 8) {
    const a =
      c ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    c =
      (t[1792 + (a & 0xff)] as number) ^
      (t[1536 + ((a >>> 8) & 0xff)] as number) ^
      (t[1280 + ((a >>> 16) & 0xff)] as number) ^
      (t[1024 + (a >>> 24)] as number) ^
      (t[768 + (bytes[i + 4] as number)] as number) ^
      (t[512 + (bytes[i + 5] as number)] as number) ^
      (t[256 + (bytes[i + 6] as number)] as number) ^
      (t[bytes[i + 7] as number] as number);
  }
  for (; i < end; i++) c = (t[(c ^ (bytes[i] as number)) & 0xff] as number) ^ (c >>> 8);
  return ~c >>> 0;
}

import { createRequire } from "node:module";
import { knownSha256 } from "./known-sha256.ts";

/*
 * SHA-256 (FIPS 180-4) of a text's UTF-8 bytes, as lowercase hex: the digest a pod records
 * for each prompt source. A builtin prompt's digest comes from the build (known-sha256.ts); any
 * other short text is hashed here in JavaScript, a long one by node:crypto.
 *
 * Loading node:crypto costs a process start about 5 ms (it loads some 25 modules), more than
 * hashing a few KiB in JavaScript takes before V8 has optimised anything (~1.5 ms for the
 * builtin instruction's 2.5 KB, measured in a fresh process; 8 KiB is about where the two
 * meet). `pod run` hashes every source before its first request, so a run whose sources are
 * all short (the builtin instruction, a small AGENTS.md) never loads node:crypto. Both paths
 * give the same digest (sha256.test.ts checks them against each other, padding edges included).
 */

/** Texts of at most this many UTF-8 bytes are hashed in JavaScript. */
export const JS_SHA256_MAX_BYTES = 4096;

/** Hex SHA-256 of the UTF-8 bytes of `text`. */
export function sha256Hex(text: string): string {
  const known = knownSha256(text);
  if (known !== undefined) return known;
  const bytes = Buffer.from(text, "utf8");
  return bytes.length <= JS_SHA256_MAX_BYTES ? sha256HexOfBytes(bytes) : nativeSha256Hex(bytes);
}

let nodeCrypto: typeof import("node:crypto") | undefined;

/** node:crypto's SHA-256 of `bytes`, loading node:crypto on first use. */
export function nativeSha256Hex(bytes: Uint8Array): string {
  nodeCrypto ??= createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return nodeCrypto.createHash("sha256").update(bytes).digest("hex");
}

// The first 32 bits of the fractional parts of the cube roots of the first 64 primes.
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

// The first 32 bits of the fractional parts of the square roots of the first 8 primes.
const INITIAL_STATE = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];

/** The JavaScript SHA-256 of `bytes` (any length; exported for the tests). */
export function sha256HexOfBytes(bytes: Uint8Array): string {
  const state = new Int32Array(INITIAL_STATE);
  const w = new Int32Array(64);
  const whole = bytes.length - (bytes.length % 64);
  for (let offset = 0; offset < whole; offset += 64) compress(state, w, bytes, offset);
  // The padding: 0x80, zeros, then the length in bits as a 64-bit big-endian number.
  const rest = bytes.length - whole;
  const tail = new Uint8Array(rest < 56 ? 64 : 128);
  tail.set(bytes.subarray(whole));
  tail[rest] = 0x80;
  const bits = bytes.length * 8;
  const high = Math.floor(bits / 0x1_0000_0000);
  const end = tail.length;
  for (let i = 0; i < 4; i++) {
    tail[end - 8 + i] = high >>> (24 - 8 * i);
    tail[end - 4 + i] = bits >>> (24 - 8 * i);
  }
  for (let offset = 0; offset < end; offset += 64) compress(state, w, tail, offset);
  let hex = "";
  for (const word of state) hex += (word >>> 0).toString(16).padStart(8, "0");
  return hex;
}

/**
 * Mixes the 64-byte block of `block` at `offset` into `state`; `w` is scratch space. The
 * rotations are written out: until V8 optimises it, this runs in the interpreter, where a
 * function call per rotation costs a third of the time.
 */
function compress(state: Int32Array, w: Int32Array, block: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const j = offset + i * 4;
    w[i] = (block[j]! << 24) | (block[j + 1]! << 16) | (block[j + 2]! << 8) | block[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const a = w[i - 15]!;
    const b = w[i - 2]!;
    const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3);
    const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10);
    w[i] = s0 + w[i - 16]! + s1 + w[i - 7]!;
  }
  let a = state[0]!;
  let b = state[1]!;
  let c = state[2]!;
  let d = state[3]!;
  let e = state[4]!;
  let f = state[5]!;
  let g = state[6]!;
  let h = state[7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t1 = (h + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const t2 = (s0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    h = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  state[0] = state[0]! + a;
  state[1] = state[1]! + b;
  state[2] = state[2]! + c;
  state[3] = state[3]! + d;
  state[4] = state[4]! + e;
  state[5] = state[5]! + f;
  state[6] = state[6]! + g;
  state[7] = state[7]! + h;
}

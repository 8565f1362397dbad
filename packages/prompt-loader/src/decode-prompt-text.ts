import { firstInvalidUtf8Offset } from "@insomnia/errors";
import { createRequire } from "node:module";

const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** The result of decoding a prompt file: normalized text, or the offset of the first non-UTF-8 byte. */
export type DecodeResult = { ok: true; text: string } | { ok: false; byteOffset: number; cause: unknown };

/** Decodes UTF-8 strictly, strips one leading BOM and turns CRLF and lone CR into LF. */
export function decodePromptText(bytes: Uint8Array): DecodeResult {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch (cause) {
    return { ok: false, byteOffset: firstInvalidUtf8Offset(bytes) ?? 0, cause };
  }
  return { ok: true, text: normalizeText(text) };
}

/** Strips one leading BOM and turns CRLF and lone CR into LF, so every OS yields the same text. */
export function normalizeText(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.replace(/\r\n?/g, "\n");
}

let nodeCrypto: typeof import("node:crypto") | undefined;

/**
 * Hex SHA-256 of the UTF-8 bytes of `text`. node:crypto is loaded on first use: loading it
 * adds to every process start, and a cold `pod prompt` never needs a hash.
 */
export function sha256Hex(text: string): string {
  nodeCrypto ??= createRequire(import.meta.url)("node:crypto") as typeof import("node:crypto");
  return nodeCrypto.createHash("sha256").update(text, "utf8").digest("hex");
}

/**
 * The sha256 a LoadedPrompt read from a file holding `bytes` has (decoded, BOM stripped, line
 * ends normalized, hashed), or undefined when the bytes are not UTF-8 (the loader would refuse
 * the file). For comparing a recorded hash with a file read some other way.
 */
export function promptFileSha256(bytes: Uint8Array): string | undefined {
  const decoded = decodePromptText(bytes);
  return decoded.ok ? sha256Hex(decoded.text) : undefined;
}

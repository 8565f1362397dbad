import { decodeUtf8Text } from "@insomnia/safe-read";
import { sha256Hex } from "./sha256.ts";

/** The result of decoding a prompt file: normalized text, or the offset of the first non-UTF-8 byte. */
export type DecodeResult = { ok: true; text: string } | { ok: false; byteOffset: number; cause: unknown };

/** Decodes UTF-8 strictly, strips one leading BOM and turns CRLF and lone CR into LF. */
export function decodePromptText(bytes: Uint8Array): DecodeResult {
  const decoded = decodeUtf8Text(bytes, { newlines: "lf" });
  return decoded.ok ? decoded : { ok: false, byteOffset: decoded.at.byteOffset, cause: decoded.cause };
}

/** Strips one leading BOM and turns CRLF and lone CR into LF, so every OS yields the same text. */
export function normalizeText(text: string): string {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  return body.replace(/\r\n?/g, "\n");
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

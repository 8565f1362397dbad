import { isAscii } from "node:buffer";
import { bytePosition, firstInvalidUtf8Offset } from "./utf8.ts";

export { completeUtf8Length } from "./utf8.ts";

// Made on the first text that is not ASCII: most prompts are ASCII, and a TextDecoder is costly to set up.
let decoder: InstanceType<typeof TextDecoder> | undefined;

/** Text decoded by {@link decodeUtf8Text}, or where its bytes stop being UTF-8. */
export type DecodedText =
  | { readonly ok: true; readonly text: string }
  | {
      readonly ok: false;
      readonly at: { readonly byteOffset: number; readonly line: number; readonly column: number };
      readonly cause: unknown;
    };

/**
 * Decodes strict UTF-8 and drops one leading BOM; `newlines: "lf"` also turns CRLF and lone CR
 * into LF, so a file saved on any OS gives the same text.
 */
export function decodeUtf8Text(bytes: Uint8Array, options: { newlines?: "keep" | "lf" } = {}): DecodedText {
  // Pure ASCII (most files) takes V8's one-byte string path and cannot hold a BOM.
  let text: string;
  if (isAscii(bytes)) text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1");
  else {
    try {
      decoder ??= new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });
      text = decoder.decode(bytes);
    } catch (cause) {
      const byteOffset = firstInvalidUtf8Offset(bytes) ?? bytes.length;
      return { ok: false, at: { byteOffset, ...bytePosition(bytes, byteOffset) }, cause };
    }
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  }
  return { ok: true, text: options.newlines === "lf" && text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text };
}

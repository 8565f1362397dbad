/** Bytes of text one MCP tool result returns at most, as for read_file (256 KiB); more is cut with a note. */
export const MAX_RESULT_BYTES: number = 256 * 1024;

import { IMAGE_MEDIA_TYPES, MAX_IMAGE_BYTES } from "@insomnia/worker";
import type { ImagePart, ImageMediaType, ToolOutput } from "@insomnia/worker";

type Part = Readonly<Record<string, unknown>>;

/** An MCP image part the worker can pass on as an image (png, jpeg, gif, webp; at most 5 MiB of padded base64), or undefined. */
function imageOf(part: Part): ImagePart | undefined {
  if (part.type !== "image" || typeof part.data !== "string") return undefined;
  if (!(IMAGE_MEDIA_TYPES as readonly unknown[]).includes(part.mimeType)) return undefined;
  if (part.data.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(part.data)) return undefined;
  if ((part.data.length / 4) * 3 > MAX_IMAGE_BYTES) return undefined;
  return { mediaType: part.mimeType as ImageMediaType, data: part.data };
}

/** A one-line stand-in for a part the worker cannot pass on as text. */
function partNote(part: Part): string {
  const bytes = typeof part.data === "string" ? Math.floor((part.data.length * 3) / 4) : undefined;
  const size = bytes === undefined ? "" : `, about ${bytes} bytes`;
  switch (part.type) {
    case "image":
      return `[image (${String(part.mimeType)}${size}) not shown: only png, jpeg, gif and webp images up to 5 MiB are passed on]`;
    case "audio":
      return `[audio (${String(part.mimeType)}${size}) not shown: this pod passes on text and images only]`;
    case "resource_link":
      return `[resource link: ${String(part.uri)}${typeof part.name === "string" ? ` (${part.name})` : ""}]`;
    default:
      return `[a "${String(part.type)}" part not shown]`;
  }
}

function embeddedText(part: Part): string {
  const resource = part.resource as Part | undefined;
  if (resource !== undefined && typeof resource.text === "string") return resource.text;
  return `[embedded resource ${String(resource?.uri)} (${String(resource?.mimeType ?? "binary")}) not shown]`;
}

/**
 * The text the model sees for an MCP tool result: its text parts joined by newlines, a
 * bracketed note for each part text cannot carry, the structured content when there is no
 * text, all capped at `maxBytes` (cut at a UTF-8 boundary, with a visible note).
 */
export function resultText(content: readonly Part[], structured: unknown, maxBytes: number = MAX_RESULT_BYTES): string {
  const pieces: string[] = [];
  for (const part of content) {
    if (imageOf(part) !== undefined) continue;
    if (part.type === "text" && typeof part.text === "string") pieces.push(part.text);
    else if (part.type === "resource") pieces.push(embeddedText(part));
    else pieces.push(partNote(part));
  }
  if (pieces.length === 0 && structured !== undefined) pieces.push(JSON.stringify(structured));
  return capText(pieces.join("\n"), maxBytes);
}

/** An MCP tool result as the worker takes it: its text, and its images as image parts when it has any. */
export function resultOutput(
  content: readonly Part[],
  structured: unknown,
  maxBytes: number = MAX_RESULT_BYTES,
): string | ToolOutput {
  const text = resultText(content, structured, maxBytes);
  const images = content.map(imageOf).filter((image) => image !== undefined);
  return images.length === 0 ? text : { content: text, images };
}

/** `text` cut to at most `maxBytes` UTF-8 bytes (never inside a character) plus a note, or unchanged. */
export function capText(text: string, maxBytes: number = MAX_RESULT_BYTES): string {
  // Each UTF-16 code unit is at most 3 UTF-8 bytes: a short string cannot be over the cap.
  if (text.length * 3 <= maxBytes) return text;
  const bytes = Buffer.from(text, "utf8");
  if (bytes.length <= maxBytes) return text;
  let end = maxBytes;
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return (
    `${bytes.subarray(0, end).toString("utf8")}\n` +
    `[truncated: the tool returned ${bytes.length} bytes of text; only the first ${end} are shown]`
  );
}

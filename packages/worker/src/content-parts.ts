import { deepFreeze } from "./deep-freeze.ts";

/** The image types a message may carry. */
export const IMAGE_MEDIA_TYPES = ["image/png", "image/jpeg", "image/gif", "image/webp"] as const;

/** One of {@link IMAGE_MEDIA_TYPES}. */
export type ImageMediaType = (typeof IMAGE_MEDIA_TYPES)[number];

/** The largest image a message may carry, in bytes (5 MiB, the smallest provider limit). */
export const MAX_IMAGE_BYTES: number = 5 * 1024 * 1024;

/** An image in a message: its bytes as base64, stored and sent exactly as they are. */
export interface ImagePart {
  readonly mediaType: ImageMediaType;
  /** The image's bytes, base64 (standard alphabet, padded). */
  readonly data: string;
}

/**
 * A piece of the model's reasoning: its text plus the provider's opaque data (Anthropic's
 * thinking signature or redacted thinking, OpenAI's reasoning item id and encrypted content),
 * kept byte for byte and sent back only to the same provider kind.
 */
export interface ReasoningPart {
  readonly text: string;
  /** The provider kind that produced it (`anthropic`, `openai`, …); other kinds never see it. */
  readonly provider: string;
  /** The provider's metadata for this part, as received (plain JSON). */
  readonly data?: Readonly<Record<string, unknown>> | undefined;
}

/** The media type of an image from its first bytes (the file's magic number), or undefined for anything else. */
export function sniffImageType(bytes: Uint8Array): ImageMediaType | undefined {
  const starts = (...sig: number[]): boolean => sig.every((b, i) => bytes[i] === b);
  if (starts(0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return "image/png";
  if (starts(0xff, 0xd8, 0xff)) return "image/jpeg";
  if (starts(0x47, 0x49, 0x46, 0x38) && (bytes[4] === 0x37 || bytes[4] === 0x39) && bytes[5] === 0x61) {
    return "image/gif";
  }
  if (
    starts(0x52, 0x49, 0x46, 0x46) &&
    bytes[8] === 0x57 &&
    bytes[9] === 0x45 &&
    bytes[10] === 0x42 &&
    bytes[11] === 0x50
  ) {
    return "image/webp";
  }
  return undefined;
}

/**
 * An image part from a file's bytes, or a sentence saying why it cannot be one (another type,
 * empty, over {@link MAX_IMAGE_BYTES}). The type comes from the bytes, never from a file name.
 */
export function imagePart(bytes: Uint8Array): ImagePart | string {
  if (bytes.length === 0) return "the image is empty";
  if (bytes.length > MAX_IMAGE_BYTES) {
    return `the image is ${bytes.length} bytes, over the limit of ${MAX_IMAGE_BYTES} (5 MiB); make it smaller`;
  }
  const mediaType = sniffImageType(bytes);
  if (mediaType === undefined) return "it is not a png, jpeg, gif or webp image (judged by its first bytes)";
  return Object.freeze({
    mediaType,
    data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString("base64"),
  });
}

type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** Checks a list of image parts (undefined allowed; empty counts as none); a frozen copy or a sentence saying what is wrong. */
export function normalizeImages(value: unknown, where: string): readonly ImagePart[] | undefined | string {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return `${where} must be an array of images`;
  const images: ImagePart[] = [];
  for (const [i, image] of value.entries()) {
    if (!isObject(image)) return `${where}[${i}] must be an object {mediaType, data}`;
    if (!(IMAGE_MEDIA_TYPES as readonly unknown[]).includes(image.mediaType)) {
      return `${where}[${i}].mediaType must be one of ${IMAGE_MEDIA_TYPES.join(", ")}, got ${JSON.stringify(image.mediaType)}`;
    }
    if (typeof image.data !== "string" || image.data.length % 4 !== 0 || !BASE64.test(image.data)) {
      return `${where}[${i}].data must be the image's bytes as padded base64`;
    }
    if ((image.data.length / 4) * 3 - (image.data.match(/=*$/)?.[0].length ?? 0) > MAX_IMAGE_BYTES) {
      return `${where}[${i}] is over the limit of ${MAX_IMAGE_BYTES} bytes (5 MiB)`;
    }
    images.push({ mediaType: image.mediaType as ImageMediaType, data: image.data });
  }
  return images.length === 0 ? undefined : deepFreeze(images);
}

/** Checks a list of reasoning parts (undefined allowed; empty counts as none); a frozen copy or a sentence saying what is wrong. */
export function normalizeReasoning(value: unknown): readonly ReasoningPart[] | undefined | string {
  if (value === undefined) return undefined;
  if (!Array.isArray(value)) return "reasoning must be an array";
  const parts: ReasoningPart[] = [];
  for (const [i, part] of value.entries()) {
    if (!isObject(part)) return `reasoning[${i}] must be an object {text, provider, data?}`;
    if (typeof part.text !== "string") return `reasoning[${i}].text must be a string`;
    if (typeof part.provider !== "string" || part.provider === "") {
      return `reasoning[${i}].provider must be the provider kind that produced it`;
    }
    if (part.data !== undefined && !isObject(part.data)) return `reasoning[${i}].data must be an object when present`;
    let data: Fields | undefined;
    try {
      data = part.data === undefined ? undefined : (JSON.parse(JSON.stringify(part.data)) as Fields);
    } catch {
      return `reasoning[${i}].data must be plain JSON data`;
    }
    parts.push({ text: part.text, provider: part.provider, ...(data === undefined ? {} : { data }) });
  }
  return parts.length === 0 ? undefined : deepFreeze(parts);
}

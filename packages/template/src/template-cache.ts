import type { CheckedTemplate } from "./check-template.ts";
import type { FileRenderer } from "./compile-renderer.ts";

/** A checked and compiled file, shared by every template that includes the same content. */
export interface CachedFile {
  readonly checked: CheckedTemplate;
  readonly render: FileRenderer;
}

/** Counters and bounds of the parsed-file cache. */
export interface TemplateCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Files cached now. */
  readonly size: number;
  /** Most files kept. */
  readonly capacity: number;
  /** Summed text length (UTF-16 code units) of the files cached now. */
  readonly textLength: number;
  /** Most summed text length kept. */
  readonly maxTextLength: number;
}

/** Bounds of the cache: files, and their summed text length in UTF-16 code units. */
export interface TemplateCacheLimits {
  readonly capacity: number;
  readonly maxTextLength: number;
}

/**
 * 4096 files: a tree of up to 4096 files (16 times the default maxIncludes) is served
 * entirely from the cache when parsed again, in any order. 8 Mi code units of text bound
 * the memory when the files are large (a file may be 1 MiB): what is kept per file (AST,
 * compiled renderer) grows with its text.
 */
export const DEFAULT_CACHE_LIMITS: TemplateCacheLimits = Object.freeze({ capacity: 4096, maxTextLength: 8 * 1024 * 1024 });

interface Entry {
  readonly file: CachedFile;
  readonly textLength: number;
}

let limits: TemplateCacheLimits = DEFAULT_CACHE_LIMITS;
// Keyed by canonical ref and text: the check and the include rewriting depend on nothing
// else, so a hit is exactly what parsing the same file again would produce. The text itself
// is the key (no hash to compute; the text length is what the cache bounds anyway).
const entries = new Map<string, Entry>();
let textLength = 0;
let hits = 0;
let misses = 0;

/** The cache key of a file. */
export function cacheKey(canonicalRef: string, text: string): string {
  return `${canonicalRef}\0${text}`;
}

/** Looks a file up, refreshing its place in the LRU order. */
export function cacheGet(key: string): CachedFile | undefined {
  const entry = entries.get(key);
  if (entry === undefined) {
    misses++;
    return undefined;
  }
  hits++;
  entries.delete(key);
  entries.set(key, entry);
  return entry.file;
}

/** Stores a file whose text is `length` code units long, evicting the least recently used ones past either bound. */
export function cacheSet(key: string, file: CachedFile, length: number): void {
  remove(key);
  entries.set(key, { file, textLength: length });
  textLength += length;
  evict();
}

function remove(key: string): void {
  const old = entries.get(key);
  if (old === undefined) return;
  entries.delete(key);
  textLength -= old.textLength;
}

function evict(): void {
  while (entries.size > limits.capacity || (textLength > limits.maxTextLength && entries.size > 0)) {
    const oldest = entries.keys().next();
    if (oldest.done === true) break;
    remove(oldest.value);
  }
}

/** Hits, misses, size and bounds of the module-level cache of parsed files. */
export function templateCacheStats(): TemplateCacheStats {
  return { hits, misses, size: entries.size, capacity: limits.capacity, textLength, maxTextLength: limits.maxTextLength };
}

/** Changes the bounds (evicting at once if now over them); for tests of eviction. Not exported from the package. */
export function setTemplateCacheLimits(next: TemplateCacheLimits): void {
  limits = next;
  evict();
}

/** Empties the cache of parsed files and resets its counters. */
export function clearTemplateCache(): void {
  entries.clear();
  textLength = 0;
  hits = 0;
  misses = 0;
}

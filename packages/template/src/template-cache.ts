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
export const DEFAULT_CACHE_LIMITS: TemplateCacheLimits = Object.freeze({
  capacity: 4096,
  maxTextLength: 8 * 1024 * 1024,
});

interface Entry {
  readonly ref: string;
  readonly text: string;
  readonly file: CachedFile;
}

let limits: TemplateCacheLimits = DEFAULT_CACHE_LIMITS;
// Keyed by canonical ref and text: the check and the include rewriting depend on nothing
// else, so a hit is exactly what parsing the same file again would produce. The text string
// the loader returned is the key itself (no hash to compute, no copy: the template that
// parsed it keeps the same string), one inner map per ref, so several versions of a ref
// (pods in different workspaces) are cached side by side.
const byRef = new Map<string, Map<string, Entry>>();
/** Every entry, least recently used first. */
const lru = new Set<Entry>();
let textLength = 0;
let hits = 0;
let misses = 0;

/** Looks a file up by canonical ref and text, refreshing its place in the LRU order. */
export function cacheGet(ref: string, text: string): CachedFile | undefined {
  const entry = byRef.get(ref)?.get(text);
  if (entry === undefined) {
    misses++;
    return undefined;
  }
  hits++;
  lru.delete(entry);
  lru.add(entry);
  return entry.file;
}

/** Stores the checked, compiled form of a file, evicting the least recently used ones past either bound. */
export function cacheSet(ref: string, text: string, file: CachedFile): void {
  const existing = byRef.get(ref)?.get(text);
  if (existing !== undefined) remove(existing);
  const entry: Entry = { ref, text, file };
  let versions = byRef.get(ref);
  if (versions === undefined) {
    versions = new Map();
    byRef.set(ref, versions);
  }
  versions.set(text, entry);
  lru.add(entry);
  textLength += text.length;
  evict();
}

function remove(entry: Entry): void {
  if (!lru.delete(entry)) return;
  textLength -= entry.text.length;
  const versions = byRef.get(entry.ref);
  versions?.delete(entry.text);
  if (versions?.size === 0) byRef.delete(entry.ref);
}

function evict(): void {
  for (const oldest of lru) {
    if (lru.size <= limits.capacity && textLength <= limits.maxTextLength) return;
    remove(oldest);
  }
}

/** Hits, misses, size and bounds of the module-level cache of parsed files. */
export function templateCacheStats(): TemplateCacheStats {
  return { hits, misses, size: lru.size, capacity: limits.capacity, textLength, maxTextLength: limits.maxTextLength };
}

/** Changes the bounds (evicting at once if now over them); for tests of eviction. Not exported from the package. */
export function setTemplateCacheLimits(next: TemplateCacheLimits): void {
  limits = next;
  evict();
}

/** Empties the cache of parsed files and resets its counters. */
export function clearTemplateCache(): void {
  byRef.clear();
  lru.clear();
  textLength = 0;
  hits = 0;
  misses = 0;
}

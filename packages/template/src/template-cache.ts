import type { CheckedTemplate, IncludeSite } from "./check-template.ts";
import type { FileRenderer } from "./compile-renderer.ts";

/**
 * A checked and compiled file, shared by every template that includes the same content.
 * It keeps no AST: the renderer is all a render needs, and the AST was most of the memory
 * a cached file held (about 1 KB per statement).
 */
export interface CachedFile {
  readonly includes: readonly IncludeSite[];
  /** Statements in the file, nested ones included, includes counted as one. */
  readonly ownNodes: number;
  readonly render: FileRenderer;
  /** Estimated heap bytes the entry holds, text included (see estimateBytes). */
  readonly bytes: number;
}

/**
 * Heap bytes per statement of a compiled file, measured with --expose-gc
 * (bench/template-caps.mjs): 300 to 800 bytes by kind of statement (`{{join}}` the most);
 * set above the worst kind so the bound holds whatever a file holds.
 */
export const BYTES_PER_STATEMENT = 900;
/** Heap bytes per file besides its statements and text: the entry, its maps and include list. */
export const BYTES_PER_FILE = 1024;

/** What a cached file is estimated to hold: its text (2 bytes a code unit at most), its statements, the entry itself. */
export function estimateBytes(text: string, ownNodes: number, includes: number): number {
  return 2 * text.length + BYTES_PER_STATEMENT * ownNodes + 200 * includes + BYTES_PER_FILE;
}

/** The cache's form of a checked and compiled file. */
export function cachedFile(text: string, checked: CheckedTemplate, render: FileRenderer): CachedFile {
  const { includes, ownNodes } = checked;
  return { includes, ownNodes, render, bytes: estimateBytes(text, ownNodes, includes.length) };
}

/** Counters and bounds of the parsed-file cache. */
export interface TemplateCacheStats {
  readonly hits: number;
  readonly misses: number;
  /** Files cached now. */
  readonly size: number;
  /** Most files kept. */
  readonly capacity: number;
  /** Estimated heap bytes held by the files cached now (text, compiled renderer, entry). */
  readonly bytes: number;
  /** Most estimated bytes kept. */
  readonly maxBytes: number;
}

/** Bounds of the cache: files, and the estimated heap bytes they hold. */
export interface TemplateCacheLimits {
  readonly capacity: number;
  readonly maxBytes: number;
}

/**
 * 4096 files: a tree of up to 4096 files (16 times the default maxIncludes) is served
 * entirely from the cache when parsed again, in any order. 64 MiB bound the memory whatever
 * the files hold: what a file keeps grows with its statements more than with its text, so
 * the bound is on the estimated heap of each entry (estimateBytes), not on text length.
 */
export const DEFAULT_CACHE_LIMITS: TemplateCacheLimits = Object.freeze({
  capacity: 4096,
  maxBytes: 64 * 1024 * 1024,
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
let bytes = 0;
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
  bytes += file.bytes;
  evict();
}

function remove(entry: Entry): void {
  if (!lru.delete(entry)) return;
  bytes -= entry.file.bytes;
  const versions = byRef.get(entry.ref);
  versions?.delete(entry.text);
  if (versions?.size === 0) byRef.delete(entry.ref);
}

function evict(): void {
  for (const oldest of lru) {
    if (lru.size <= limits.capacity && bytes <= limits.maxBytes) return;
    remove(oldest);
  }
}

/** Hits, misses, size and bounds of the module-level cache of parsed files. */
export function templateCacheStats(): TemplateCacheStats {
  return { hits, misses, size: lru.size, capacity: limits.capacity, bytes, maxBytes: limits.maxBytes };
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
  bytes = 0;
  hits = 0;
  misses = 0;
}

import type { CheckedTemplate } from "./check-template.ts";
import type { CompiledTemplate } from "./handlebars-env.ts";

/** A checked and compiled file, shared by every template that includes the same content. */
export interface CachedFile {
  readonly checked: CheckedTemplate;
  readonly compiled: CompiledTemplate;
}

/** Counters of the parsed-file cache. */
export interface TemplateCacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly size: number;
  readonly capacity: number;
}

const CAPACITY = 512;
// Keyed by canonical ref and content hash: the check and the include rewriting depend on
// nothing else, so a hit is exactly what parsing the same file again would produce.
const entries = new Map<string, CachedFile>();
let hits = 0;
let misses = 0;

/** The cache key of a file. */
export function cacheKey(canonicalRef: string, sha256: string): string {
  return `${canonicalRef}\0${sha256}`;
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
  return entry;
}

/** Stores a file, evicting the least recently used one past capacity. */
export function cacheSet(key: string, entry: CachedFile): void {
  entries.delete(key);
  entries.set(key, entry);
  while (entries.size > CAPACITY) {
    const oldest = entries.keys().next();
    if (oldest.done === true) break;
    entries.delete(oldest.value);
  }
}

/** Hits, misses and size of the module-level cache of parsed files. */
export function templateCacheStats(): TemplateCacheStats {
  return { hits, misses, size: entries.size, capacity: CAPACITY };
}

/** Empties the cache of parsed files and resets its counters. */
export function clearTemplateCache(): void {
  entries.clear();
  hits = 0;
  misses = 0;
}

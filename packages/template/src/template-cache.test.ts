import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makePromptDirs, sampleContext, type PromptDirs } from "./__fixtures__/prompt-dirs.ts";
import { DEFAULT_LIMITS, SystemPromptTemplate } from "./system-prompt-template.ts";
import {
  clearTemplateCache,
  DEFAULT_CACHE_LIMITS,
  estimateBytes,
  setTemplateCacheLimits,
  templateCacheStats,
} from "./template-cache.ts";

let p: PromptDirs;
beforeEach(() => {
  p = makePromptDirs();
  clearTemplateCache();
});
afterEach(() => {
  setTemplateCacheLimits(DEFAULT_CACHE_LIMITS);
  clearTemplateCache();
  p.cleanup();
});

/** A chain of `count` files: n0 includes n1, ... (every file once), each `filler` long plus its include. */
function writeTree(count: number, filler = "text"): void {
  for (let i = 0; i < count; i++) {
    // Fan-out 10 keeps the include depth small for any count.
    const children = Array.from({ length: 10 }, (_, k) => i * 10 + k + 1).filter((c) => c < count);
    p.write(`$workspace/n${i}`, `${filler} ${i}\n${children.map((c) => `{{> n${c}}}`).join("\n")}`);
  }
}

describe("template cache", () => {
  it("default_bounds_hold_sixteen_times_the_default_include_limit", () => {
    expect(templateCacheStats()).toMatchObject({
      capacity: 4096,
      maxBytes: 64 * 1024 * 1024,
      size: 0,
      bytes: 0,
    });
    expect(DEFAULT_CACHE_LIMITS.capacity).toBe(16 * DEFAULT_LIMITS.maxIncludes);
  });

  it("a_tree_of_1000_files_fully_hits_on_a_second_parse", async () => {
    writeTree(1000);
    const first = await SystemPromptTemplate.parse("$workspace/n0", p.loader, { maxIncludes: 1000 });
    expect(templateCacheStats()).toMatchObject({ hits: 0, misses: 1000, size: 1000 });
    const second = await SystemPromptTemplate.parse("$workspace/n0", p.loader, { maxIncludes: 1000 });
    expect(templateCacheStats()).toMatchObject({ hits: 1000, misses: 1000, size: 1000 });
    expect(second.renderInstruction(sampleContext())).toBe(first.renderInstruction(sampleContext()));
    expect(second.sources).toEqual(first.sources);
  });

  it("two_workspaces_with_different_files_under_the_same_ref_both_stay_cached", async () => {
    const other = makePromptDirs();
    try {
      p.write("$workspace/main", "first {{cwd}}");
      other.write("$workspace/main", "second {{date}}");
      for (let round = 0; round < 2; round++) {
        const a = await SystemPromptTemplate.parse("$workspace/main", p.loader);
        const b = await SystemPromptTemplate.parse("$workspace/main", other.loader);
        expect([a.renderInstruction(sampleContext()), b.renderInstruction(sampleContext())]).toEqual([
          "first /repo",
          "second 2026-11-30",
        ]);
      }
      expect(templateCacheStats()).toMatchObject({
        hits: 2,
        misses: 2,
        size: 2,
        bytes: estimateBytes("first {{cwd}}", 2, 0) + estimateBytes("second {{date}}", 2, 0),
      });
    } finally {
      other.cleanup();
    }
  });

  it("past_capacity_the_least_recently_used_files_go_first", async () => {
    setTemplateCacheLimits({ capacity: 3, maxBytes: DEFAULT_CACHE_LIMITS.maxBytes });
    for (const name of ["a", "b", "c", "d"]) p.write(`$workspace/${name}`, name);
    await SystemPromptTemplate.parse("$workspace/a", p.loader);
    await SystemPromptTemplate.parse("$workspace/b", p.loader);
    await SystemPromptTemplate.parse("$workspace/c", p.loader);
    await SystemPromptTemplate.parse("$workspace/a", p.loader); // a is now the most recent
    await SystemPromptTemplate.parse("$workspace/d", p.loader); // evicts b
    expect(templateCacheStats()).toMatchObject({ hits: 1, misses: 4, size: 3, bytes: 3 * estimateBytes("a", 1, 0) });
    await SystemPromptTemplate.parse("$workspace/a", p.loader);
    await SystemPromptTemplate.parse("$workspace/c", p.loader);
    await SystemPromptTemplate.parse("$workspace/b", p.loader);
    expect(templateCacheStats()).toMatchObject({ hits: 3, misses: 5, size: 3 });
  });

  it("past_the_memory_bound_files_are_evicted_even_below_capacity", async () => {
    const ten = estimateBytes("0123456789", 1, 0);
    const statements = estimateBytes("{{cwd}}{{cwd}}{{cwd}}", 3, 0);
    setTemplateCacheLimits({ capacity: 100, maxBytes: ten + statements });
    p.write("$workspace/ten", "0123456789");
    p.write("$workspace/also-ten", "abcdefghij");
    // Fewer characters, more statements: it counts for what it holds, not for its length.
    p.write("$workspace/three", "{{cwd}}{{cwd}}{{cwd}}");
    await SystemPromptTemplate.parse("$workspace/ten", p.loader);
    await SystemPromptTemplate.parse("$workspace/also-ten", p.loader);
    expect(templateCacheStats()).toMatchObject({ size: 2, bytes: 2 * ten });
    const big = await SystemPromptTemplate.parse("$workspace/three", p.loader);
    expect(statements).toBeGreaterThan(ten);
    expect(templateCacheStats()).toMatchObject({ size: 2, bytes: ten + statements, misses: 3 });
    // An evicted file still renders from the template that holds it.
    setTemplateCacheLimits({ capacity: 100, maxBytes: 5 });
    expect(templateCacheStats()).toMatchObject({ size: 0, bytes: 0 });
    expect(big.renderInstruction(sampleContext())).toBe("/repo/repo/repo");
  });

  it("a_changed_file_replaces_nothing_and_counts_its_own_text", async () => {
    p.write("$workspace/x", "one");
    await SystemPromptTemplate.parse("$workspace/x", p.loader);
    p.write("$workspace/x", "three");
    await SystemPromptTemplate.parse("$workspace/x", p.loader);
    expect(templateCacheStats()).toMatchObject({
      size: 2,
      bytes: estimateBytes("one", 1, 0) + estimateBytes("three", 1, 0),
      misses: 2,
    });
    clearTemplateCache();
    expect(templateCacheStats()).toMatchObject({ size: 0, bytes: 0, hits: 0, misses: 0 });
  });
});

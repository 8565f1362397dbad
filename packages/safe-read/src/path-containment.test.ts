import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { propertyRuns } from "../../../test/support/property-runs.ts";
import { isSameOrInside, isStrictlyInside, pathSegments, segmentsWithin } from "./path-containment.ts";

describe("path containment", () => {
  test("strictly_inside_compares_whole_segments_and_excludes_the_dir_itself", () => {
    expect(isStrictlyInside("/a/prompts", "/a/prompts/x.md", "linux")).toBe(true);
    expect(isStrictlyInside("/a/prompts/", "/a/prompts/d/x.md", "linux")).toBe(true);
    expect(isStrictlyInside("/a/prompts", "/a/prompts-evil/x.md", "linux")).toBe(false);
    expect(isStrictlyInside("/a/prompts", "/a/prompts", "linux")).toBe(false);
    expect(isStrictlyInside("/a/prompts", "/a/prompts/../x.md", "linux")).toBe(false);
    expect(isStrictlyInside("/", "/etc/passwd", "linux")).toBe(true);
  });

  test("same_or_inside_includes_the_dir_and_names_that_start_with_dots", () => {
    expect(isSameOrInside("/repo", "/repo", "linux")).toBe(true);
    expect(isSameOrInside("/repo", "/repo/..hidden/x", "linux")).toBe(true);
    expect(isSameOrInside("/repo", "/repo2/x", "linux")).toBe(false);
    expect(isSameOrInside("/repo", "/repo/../etc", "linux")).toBe(false);
  });

  test("folds_case_and_drive_on_windows", () => {
    expect(isStrictlyInside("C:\\Users\\me\\prompts", "c:\\users\\ME\\prompts\\x.md", "win32")).toBe(true);
    expect(isStrictlyInside("C:\\p", "D:\\p\\x.md", "win32")).toBe(false);
  });

  test("segments_within_limits_the_depth", () => {
    const dir = pathSegments("/a/b", "linux");
    expect(segmentsWithin(pathSegments("/a/b/c", "linux"), dir, 1)).toBe(true);
    expect(segmentsWithin(pathSegments("/a/b/c/d", "linux"), dir, 1)).toBe(false);
    expect(segmentsWithin(dir, dir, 0)).toBe(true);
    expect(pathSegments("/a//b/./c", "linux")).toEqual(["/", "a", "b", "c"]);
  });
});

describe("plain paths compared by text", () => {
  test("agree_with_the_segment_comparison_on_generated_paths", () => {
    // Paths built from a few names, with empty, `.` and `..` segments and trailing slashes
    // mixed in, so the text comparison and the segment comparison both get taken.
    const segment = fc.constantFrom("a", "b", "ab", "a.b", "..a", ".a", ".", "..", "", "a b", "é");
    const absolute = fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join("/")}`);
    fc.assert(
      fc.property(absolute, absolute, (dir, candidate) => {
        const d = pathSegments(dir, "linux");
        const c = pathSegments(candidate, "linux");
        expect(isSameOrInside(dir, candidate, "linux")).toBe(segmentsWithin(c, d));
        expect(isStrictlyInside(dir, candidate, "linux")).toBe(c.length > d.length && segmentsWithin(c, d));
      }),
      { numRuns: propertyRuns(400, 2000), seed: 0x5afe },
    );
  });
});

import { describe, expect, it } from "vitest";
import { isInside } from "./is-inside.ts";

describe("isInside", () => {
  it("compares_whole_segments", () => {
    expect(isInside("/a/prompts", "/a/prompts/x.md", "linux")).toBe(true);
    expect(isInside("/a/prompts/", "/a/prompts/d/x.md", "linux")).toBe(true);
    expect(isInside("/a/prompts", "/a/prompts-evil/x.md", "linux")).toBe(false);
    expect(isInside("/a/prompts", "/a/prompts", "linux")).toBe(false);
    expect(isInside("/a/prompts", "/a/x.md", "linux")).toBe(false);
    expect(isInside("/a/prompts", "/a/prompts/../x.md", "linux")).toBe(false);
    expect(isInside("/", "/etc/passwd", "linux")).toBe(true);
  });

  it("folds_case_and_drive_on_windows", () => {
    expect(isInside("C:\\Users\\me\\prompts", "c:\\users\\ME\\prompts\\x.md", "win32")).toBe(true);
    expect(isInside("C:\\p", "D:\\p\\x.md", "win32")).toBe(false);
  });
});

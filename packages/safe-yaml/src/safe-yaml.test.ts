import { describe, expect, test } from "vitest";
import { formatKey, lineColumn, pathKey } from "./yaml-path.ts";

describe("parseSafeYaml", () => {
  test("parses_plain_data_with_the_position_of_each_key", async () => {
    const { parseSafeYaml } = await import("./safe-yaml.ts");
    const parsed = parseSafeYaml("a:\n  - x: 1\n");
    expect(parsed.issues).toEqual([]);
    expect(parsed.value).toEqual({ a: [{ x: 1 }] });
    const at = parsed.positions.get(pathKey(["a", 0, "x"]));
    expect(at?.key === undefined ? undefined : lineColumn("a:\n  - x: 1\n", at.key)).toEqual({ line: 2, column: 5 });
    expect(formatKey(["a", 0, "x"])).toBe("a[0].x");
  });

  test("refuses_what_could_surprise_a_reader", async () => {
    const { parseSafeYaml } = await import("./safe-yaml.ts");
    const codes = (text: string) => parseSafeYaml(text).issues.map((issue) => issue.code);
    expect(codes("a: !!str x\n")).toContain("YAML_TAG");
    expect(codes("a: 1\na: 2\n")).toContain("YAML_DUPLICATE_KEY");
    expect(codes("a: 1\n---\nb: 2\n")).toContain("YAML_MULTIPLE_DOCUMENTS");
    expect(codes("__proto__: 1\n")).toContain("FORBIDDEN_KEY");
    expect(codes("<<: {a: 1}\n")).toContain("YAML_MERGE_KEY");
    expect(codes(`${"[".repeat(40)}${"]".repeat(40)}\n`)).toContain("YAML_SYNTAX");
  });
});

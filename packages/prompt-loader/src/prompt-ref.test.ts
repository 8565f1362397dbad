import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { PromptLoaderError } from "./prompt-loader-error.ts";
import { MAX_REF_LENGTH, MAX_REF_SEGMENTS, parseRef, type PromptRef } from "./prompt-ref.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

function errorOf(raw: string, current?: PromptRef): PromptLoaderError {
  try {
    parseRef(raw, current);
  } catch (error) {
    if (PromptLoaderError.is(error)) return error;
    throw error;
  }
  throw new Error(`expected ${JSON.stringify(raw)} to be rejected`);
}

describe("parseRef", () => {
  it.each([
    ["$insomnia/default", "$insomnia", "default"],
    ["$user/my-style", "$user", "my-style"],
    ["$workspace/team/review_2", "$workspace", "team/review_2"],
    ["$insomnia/common/header", "$insomnia", "common/header"],
    ["$user/0", "$user", "0"],
  ])("parses_qualified_reference %s", (raw, prefix, path) => {
    expect(parseRef(raw)).toEqual({ prefix, path, canonical: `${prefix}/${path}` });
  });

  it("include_unqualified_resolves_relative_to_current_prefix", () => {
    expect(parseRef("nested/foo", parseRef("$insomnia/common/header")).canonical).toBe("$insomnia/common/nested/foo");
    expect(parseRef("sub", parseRef("$insomnia/default")).canonical).toBe("$insomnia/sub");
    expect(parseRef("x", parseRef("$workspace/a/b/c")).canonical).toBe("$workspace/a/b/x");
  });

  it("include_explicit_prefix_overrides_relative", () => {
    expect(parseRef("$insomnia/default", parseRef("$user/custom")).canonical).toBe("$insomnia/default");
    expect(parseRef("$workspace/a", parseRef("$user/deep/er/file")).canonical).toBe("$workspace/a");
  });

  it("unqualified_without_current_is_an_error", () => {
    const error = errorOf("sub");
    expect(error.code).toBe("UNQUALIFIED_WITHOUT_CURRENT");
    expect(error.ref).toBe("sub");
    expect(error.message).toContain("$user/sub");
  });

  it("unknown_prefix_is_its_own_code", () => {
    const error = errorOf("$foo/x");
    expect([error.code, error.index, error.ref]).toEqual(["UNKNOWN_PREFIX", 0, "$foo/x"]);
    expect(errorOf("$USER/x").message).toContain("did you mean $user/?");
    expect(errorOf("$/x").code).toBe("UNKNOWN_PREFIX");
  });

  it.each([
    ["$user/", 6, "empty path"],
    ["$user", 5, "empty path"],
    ["$user\\x", 5, 'expected "/"'],
    ["$user/../x", 6, '".." segments'],
    ["$user/a/./b", 8, '"." segments'],
    ["..", 0, '".." segments'],
    ["$user/x.md", 7, "drop the .md, it is implied"],
    ["x.md", 1, "drop the .md, it is implied"],
    ["a\\b", 1, "backslashes"],
    ["C:x", 1, "drive letters"],
    ["c:/x", 1, "drive letters"],
    ["/etc/passwd", 0, "absolute paths"],
    ["$user//x", 6, "empty path segment"],
    ["a//b", 2, "empty path segment"],
    ["a/b/", 3, 'trailing "/"'],
    ["x\0y", 1, "NUL"],
    ["~/x", 0, "(~)"],
    ["$user/é", 6, "non-ASCII character"],
    ["$user/a\uff0eb", 7, "U+FF0E"],
    ["$user/a\u2024b", 7, "U+2024"],
    ["$user/%2e%2e/x", 6, '"%"'],
    ["$user/_x", 6, "must start with a letter or digit"],
    ["$user/a b", 7, '" "'],
    ["$user/a.b", 7, '"."'],
    ["$user/x.md/y", 7, '"."'],
    ["", 0, "empty reference"],
  ])("rejects_invalid_reference %j at index %i", (raw, index, text) => {
    const error = errorOf(raw);
    expect(error.code).toBe("INVALID_REF");
    expect(error.index).toBe(index);
    expect(error.ref).toBe(raw);
    expect(error.message).toContain(text);
    expect(error.message).toContain("[A-Za-z0-9][A-Za-z0-9_-]*");
  });

  it("caps_reference_length_and_segment_count", () => {
    const long = `$user/${"a".repeat(MAX_REF_LENGTH)}`;
    expect([errorOf(long).code, errorOf(long).index]).toEqual(["INVALID_REF", MAX_REF_LENGTH]);
    expect(parseRef(`$user/${"a".repeat(MAX_REF_LENGTH - 6)}`).path).toHaveLength(MAX_REF_LENGTH - 6);
    const many = `$user/${Array.from({ length: MAX_REF_SEGMENTS + 1 }, () => "a").join("/")}`;
    expect(errorOf(many).code).toBe("INVALID_REF");
    expect(errorOf(many).message).toContain(`more than ${MAX_REF_SEGMENTS} path segments`);
    const deep = parseRef(`$user/${Array.from({ length: MAX_REF_SEGMENTS }, () => "a").join("/")}`);
    expect(errorOf("b/c", deep).message).toContain("over the limits");
  });

  it("rejects_a_hand_built_current_with_dot_dot", () => {
    const forged = { prefix: "$user", path: "../x", canonical: "$user/../x" } as const;
    expect(errorOf("y", forged).code).toBe("INVALID_REF");
  });

  it("valid_references_round_trip_through_canonical", () => {
    const segment = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_-]{0,11}$/);
    const prefix = fc.constantFrom("$insomnia", "$user", "$workspace");
    fc.assert(
      fc.property(prefix, fc.array(segment, { minLength: 1, maxLength: 6 }), (p, segs) => {
        const raw = `${p}/${segs.join("/")}`;
        const ref = parseRef(raw);
        expect(ref).toEqual({ prefix: p, path: segs.join("/"), canonical: raw });
        expect(parseRef(ref.canonical)).toEqual(ref);
      }),
      { numRuns: propertyRuns(500, 5_000) },
    );
  });

  // Generated from traversal tricks; 20,000 runs of parseRef alone take well under a second.
  it("traversal_tricks_never_yield_a_path_outside_the_grammar", () => {
    const token = fc.constantFrom(
      "..",
      ".",
      "%2e%2e",
      "%2f",
      "%c0%ae",
      "\\",
      "/",
      "//",
      "\0",
      "\uff0e",
      "\u2024",
      "\uff0f",
      "\u2215",
      "\ufffd",
      "\u00c0\u00ae",
      "C:",
      "c:",
      "~",
      ".md",
      "$",
      "$user",
      "$user/",
      "$workspace/",
      "$insomnia/",
      "$foo/",
      "a",
      "ok",
      "dir",
      "link-out",
      "_",
      "-",
      " ",
      ":",
      "\r\n",
      "\u202e",
    );
    const current = fc.option(fc.constantFrom("$insomnia/default", "$user/a/b", "$workspace/x"), { nil: undefined });
    fc.assert(
      fc.property(fc.array(token, { maxLength: 10 }), current, (tokens, cur) => {
        const raw = tokens.join("");
        let ref: PromptRef;
        try {
          ref = parseRef(raw, cur === undefined ? undefined : parseRef(cur));
        } catch (error) {
          expect(PromptLoaderError.is(error)).toBe(true);
          const e = error as PromptLoaderError;
          if (e.code === "INVALID_REF") {
            expect(e.index).toBeGreaterThanOrEqual(0);
            expect(e.index).toBeLessThanOrEqual(raw.length);
          }
          return;
        }
        expect(["$insomnia", "$user", "$workspace"]).toContain(ref.prefix);
        for (const seg of ref.path.split("/")) expect(seg).toMatch(SEGMENT);
        expect(ref.canonical).toBe(`${ref.prefix}/${ref.path}`);
      }),
      { numRuns: propertyRuns(1_000, 20_000) },
    );
  });

  it("any_string_is_rejected_or_parsed_into_the_grammar", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 40 }), (raw) => {
        try {
          const ref = parseRef(raw, parseRef("$user/a/b"));
          for (const seg of ref.path.split("/")) expect(seg).toMatch(SEGMENT);
        } catch (error) {
          expect(PromptLoaderError.is(error)).toBe(true);
        }
      }),
      { numRuns: propertyRuns(500, 10_000) },
    );
  });
});

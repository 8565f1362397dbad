import { realpath } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeEscapeTree } from "./__fixtures__/escape-tree.ts";
import { tempDirs } from "./__fixtures__/temp-dir.ts";
import { PromptLoader } from "./prompt-loader.ts";
import { PromptLoaderError } from "./prompt-loader-error.ts";
import { parseRef } from "./prompt-ref.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

const SECRET = "SECRET-7f3a do not leak";
const temp = tempDirs();
let loader: PromptLoader;

/** The shared escape tree (see writeEscapeTree): the roots, and symlinks that point back out. */
beforeAll(async () => {
  const base = await temp.make();
  await writeEscapeTree(base, SECRET);
  loader = new PromptLoader({
    userDir: join(base, "user"),
    workspaceDir: join(base, "workspace"),
    builtinDir: join(base, "builtin"),
  });
});
afterAll(() => temp.cleanup());

const names = fc.constantFrom(
  "ok",
  "dir",
  "inner",
  "up",
  "upup",
  "link-out",
  "abs-out",
  "dir-out",
  "abs-dir-out",
  "sib",
  "loop",
  "dev",
  "x",
  "pipe",
  "secret",
  "user-evil",
  "user",
  "workspace",
  "ws-real",
  "builtin",
);
const tricks = fc.constantFrom(
  "..",
  ".",
  "%2e%2e",
  "%2f",
  "%c0%ae",
  "\u00c0\u00ae",
  "\ufffd",
  "\\",
  "//",
  "\0",
  "\uff0e",
  "\u2024",
  "\uff0f",
  "C:",
  "~",
  ".md",
  "$",
  "$user/",
  "$workspace/",
  "$insomnia/",
  "$foo/",
  "/",
);
const tricky = fc
  .array(
    fc.oneof(
      { arbitrary: names, weight: 4 },
      { arbitrary: fc.constant("/"), weight: 3 },
      { arbitrary: tricks, weight: 2 },
    ),
    {
      minLength: 1,
      maxLength: 8,
    },
  )
  .map((tokens) => tokens.join(""));
// Mostly-valid paths through the fixture's names, so about half the runs reach the file system.
const walks = fc.array(names, { minLength: 1, maxLength: 4 }).map((segments) => segments.join("/"));
const refs = fc.oneof(walks, tricky);
const prefixed = fc.tuple(fc.constantFrom("$user/", "$workspace/", "$insomnia/", ""), refs).map(([p, r]) => p + r);
const currents = fc.option(fc.constantFrom("$user/dir/ok", "$workspace/ok", "$insomnia/ok", "$user/sib/x"), {
  nil: undefined,
});

describe("PromptLoader.load under traversal tricks", () => {
  // 10,000 loads against a real tree (each is several syscalls); parseRef alone gets 20,000 runs in prompt-ref.test.ts.
  it("every_load_throws_or_returns_a_file_inside_its_root_and_never_the_secret", async () => {
    const seen = new Map<string, number>();
    await fc.assert(
      fc.asyncProperty(prefixed, currents, async (raw, cur) => {
        let outcome: string;
        try {
          const ref = parseRef(raw, cur === undefined ? undefined : parseRef(cur));
          const loaded = await loader.load(ref);
          const root = await realpath(loader.rootOf(ref.prefix) ?? "");
          const rel = relative(root, await realpath(loaded.file));
          expect(rel === "" || rel === ".." || rel.startsWith(`..${"/"}`) || isAbsolute(rel)).toBe(false);
          expect(loaded.text).not.toContain("SECRET");
          outcome = "ok";
        } catch (error) {
          if (!PromptLoaderError.is(error)) throw error;
          expect(error.message).not.toContain(SECRET);
          outcome = error.code;
        }
        seen.set(outcome, (seen.get(outcome) ?? 0) + 1);
      }),
      {
        numRuns: propertyRuns(300, 10_000),
        examples: [
          ["$user/link-out", undefined],
          ["$user/abs-dir-out/secret", undefined],
          ["$user/dir/upup/secret", undefined],
          ["link-out", "$workspace/ok"],
          ["$insomnia/user/ok", undefined],
          ["$user/dir/up/ok", undefined],
          ["$user/loop", undefined],
          ["$user/x", undefined],
        ],
      },
    );
    // The examples above make these outcomes certain, so the property is never vacuous.
    expect(seen.get("ok")).toBeGreaterThan(0);
    expect(seen.get("PATH_ESCAPE")).toBeGreaterThan(0);
    expect(seen.get("NOT_A_FILE")).toBeGreaterThan(0);
    expect(seen.get("INVALID_REF")).toBeGreaterThan(0);
  });
});

import { execFileSync } from "node:child_process";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { makePodDir, type PodDir } from "./__fixtures__/pod-dir.ts";
import { utf8Boundary } from "@insomnia/safe-read";
import { AGENTS_MD_MAX_BYTES, readAgentsMd, truncationNotice } from "./agents-md.ts";

let dir: PodDir;
let scope: Scope;

beforeEach(async () => {
  dir = await makePodDir("x");
  scope = Scope.fromConfig({ allow: [{ target: ".", permission: "write" }] }, dir.pwd);
});
afterEach(async () => {
  await dir.cleanup();
});

const agentsFile = (): string => join(dir.pwd, "AGENTS.md");

describe("readAgentsMd", () => {
  test("missing_file_is_absent_without_warning", async () => {
    expect(await readAgentsMd(dir.pwd, scope)).toEqual({ bytes: 0, totalBytes: 0, truncated: false, warnings: [] });
  });

  test("small_file_is_returned_verbatim_without_bom", async () => {
    await writeFile(agentsFile(), "\uFEFFUse tabs.\r\nNo semicolons.\n");
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBe("Use tabs.\r\nNo semicolons.\n");
    expect(result.file).toBe(agentsFile());
    expect(result.truncated).toBe(false);
    expect(result.warnings).toEqual([]);
  });

  test("empty_file_is_absent_without_warning", async () => {
    await writeFile(agentsFile(), "");
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.warnings).toEqual([]);
  });

  test("file_of_exactly_the_cap_is_not_truncated", async () => {
    const text = "a".repeat(AGENTS_MD_MAX_BYTES);
    await writeFile(agentsFile(), text);
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBe(text);
    expect(result.truncated).toBe(false);
    expect(result.warnings).toEqual([]);
  });

  test("cap_cuts_before_a_four_byte_emoji_straddling_it", async () => {
    // 65534 ASCII bytes, then U+1F600 (4 bytes) occupies bytes 65534..65537: the 64 KiB cap falls inside it.
    const head = "a".repeat(AGENTS_MD_MAX_BYTES - 2);
    const content = `${head}\u{1F600}tail`;
    await writeFile(agentsFile(), content);
    const total = Buffer.byteLength(content);
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBe(head + truncationNotice(AGENTS_MD_MAX_BYTES - 2, total));
    expect(result.text).toContain(`[AGENTS.md truncated: showing the first 65534 of ${total} bytes]`);
    expect(result.bytes).toBe(AGENTS_MD_MAX_BYTES - 2);
    expect(result.totalBytes).toBe(total);
    expect(result.truncated).toBe(true);
    expect(result.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_TRUNCATED"]);
    expect(result.warnings[0]?.file).toBe(agentsFile());
  });

  test("cap_on_a_code_point_boundary_keeps_every_byte_up_to_it", async () => {
    await writeFile(agentsFile(), "ab\u{1F600}cd");
    const result = await readAgentsMd(dir.pwd, scope, { maxBytes: 6 });
    expect(result.text).toBe(`ab\u{1F600}${truncationNotice(6, 8)}`);
  });

  test("non_utf8_file_is_omitted_with_warning", async () => {
    await writeFile(agentsFile(), Buffer.from([0x48, 0x69, 0xff, 0xfe, 0x0a]));
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.warnings.map((w) => [w.code, w.file])).toEqual([["AGENTS_MD_NOT_UTF8", agentsFile()]]);
  });

  test("symlink_to_a_file_outside_scope_is_omitted_with_warning", async () => {
    const secret = join(dir.outside, "id_rsa");
    await writeFile(secret, "-----BEGIN OPENSSH PRIVATE KEY-----\n");
    await symlink(secret, agentsFile());
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.file).toBe(secret);
    expect(result.warnings.map((w) => [w.code, w.file])).toEqual([["AGENTS_MD_OUTSIDE_SCOPE", secret]]);
    expect(JSON.stringify(result)).not.toContain("PRIVATE KEY");
  });

  test("a_scope_without_the_pods_directory_says_to_allow_it_not_to_move_the_file", async () => {
    await writeFile(agentsFile(), "Rules.\n");
    const narrow = Scope.fromConfig({ allow: [{ target: dir.outside, permission: "write" }] }, dir.pwd);
    const result = await readAgentsMd(dir.pwd, narrow);
    expect(result.text).toBeUndefined();
    const message = result.warnings[0]?.message ?? "";
    expect(result.warnings[0]?.code).toBe("AGENTS_MD_OUTSIDE_SCOPE");
    expect(message).toContain(`Allow reading ${dir.pwd}`);
    expect(message).not.toContain("Move the file");
  });

  test("symlink_to_a_file_inside_scope_is_followed", async () => {
    await mkdir(join(dir.pwd, "docs"));
    await writeFile(join(dir.pwd, "docs", "agents.md"), "Inside.\n");
    await symlink(join("docs", "agents.md"), agentsFile());
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBe("Inside.\n");
    expect(result.file).toBe(join(dir.pwd, "docs", "agents.md"));
  });

  test("dangling_symlink_is_omitted_with_warning", async () => {
    await symlink(join(dir.pwd, "nowhere.md"), agentsFile());
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_UNREADABLE"]);
  });

  test("directory_named_agents_md_is_omitted_with_warning", async () => {
    await mkdir(agentsFile());
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.warnings.map((w) => [w.code, w.file])).toEqual([["AGENTS_MD_UNREADABLE", agentsFile()]]);
  });

  test("fifo_named_agents_md_does_not_block", async () => {
    execFileSync("mkfifo", [agentsFile()]);
    const result = await readAgentsMd(dir.pwd, scope);
    expect(result.text).toBeUndefined();
    expect(result.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_UNREADABLE"]);
  });
});

describe("utf8Boundary", () => {
  test("never_splits_a_code_point_and_keeps_the_longest_prefix", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 40 }), fc.nat({ max: 200 }), (text, limit) => {
        const bytes = Buffer.from(text, "utf8");
        const cut = utf8Boundary(bytes, limit);
        const prefix = new TextDecoder("utf-8", { fatal: true }).decode(bytes.subarray(0, cut));
        expect(text.startsWith(prefix)).toBe(true);
        expect(cut).toBeLessThanOrEqual(Math.min(limit, bytes.length));
        // The longest: the next code point would not fit under the limit.
        const next = text.slice(prefix.length).codePointAt(0);
        if (next !== undefined) expect(cut + Buffer.byteLength(String.fromCodePoint(next))).toBeGreaterThan(limit);
      }),
    );
  });
});

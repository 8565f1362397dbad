import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { detectSandbox, findOnPath, INSTALL_HINT, NAMESPACE_HINT } from "./availability.ts";

const dir = mkdtempSync(join(tmpdir(), "insomnia-bwrap-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("detecting the sandbox", () => {
  test("without_bwrap_on_path_it_is_unavailable_with_the_install_hint", async () => {
    const found = await detectSandbox({ env: { PATH: dir } });
    expect(found.available).toBe(false);
    if (found.available) return;
    expect(found.error.code).toBe("SANDBOX_UNAVAILABLE");
    expect(found.error.hint).toBe(INSTALL_HINT);
    expect(found.error.message).toBe(
      `bubblewrap (bwrap) is not installed; run_command is not offered (${INSTALL_HINT})`,
    );
  });

  test("a_bwrap_that_cannot_create_namespaces_is_unavailable_with_what_bwrap_said", async () => {
    // A real program standing where bwrap would: it fails the way bwrap does without user namespaces.
    const fake = join(dir, "bwrap");
    writeFileSync(fake, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n");
    chmodSync(fake, 0o755);
    expect(findOnPath("bwrap", `relative:${dir}`)).toBe(fake);
    const found = await detectSandbox({ env: { PATH: dir } });
    expect(found.available).toBe(false);
    if (found.available) return;
    expect(found.error.hint).toBe(NAMESPACE_HINT);
    expect(found.error.detail).toBe(
      `bubblewrap (${fake}) cannot create namespaces here: bwrap: No permissions to creating new namespace; run_command is not offered (${NAMESPACE_HINT})`,
    );
  });
});

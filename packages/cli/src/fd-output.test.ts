import { spawn } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { FdOutputStream } from "./fd-output.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const unused = () => {
  throw new Error("the fallback was used");
};

/**
 * A child that never reads its stdin and prints "ready" when `script` ran, and the descriptor
 * of our end of that pipe (non-blocking, as libuv leaves it).
 */
async function pipeToChild(script: string) {
  const child = spawn(
    process.execPath,
    ["-e", `${script}; process.stdout.write("ready"); setTimeout(() => {}, 60_000)`],
    {
      stdio: ["pipe", "pipe", "ignore"],
    },
  );
  await new Promise((resolve) => child.stdout?.once("data", resolve));
  const fd = (child.stdin as unknown as { _handle: { fd: number } })._handle.fd;
  return { child, fd };
}

describe("FdOutputStream", () => {
  test("writes_every_byte_to_the_descriptor", () => {
    const dir = mkdtempSync(join(tmpdir(), "fd-output-"));
    dirs.push(dir);
    const file = join(dir, "out");
    const fd = openSync(file, "w");
    const out = new FdOutputStream(fd, unused);
    const text = `ünïcödé — ${"x".repeat(200_000)} 🙂\n`;
    expect(out.write(text)).toBe(true);
    expect(out.write("second\n")).toBe(true);
    closeSync(fd);
    expect(readFileSync(file, "utf8")).toBe(`${text}second\n`);
    expect(out.isTTY).toBe(false);
  });

  test("only_a_terminal_is_a_tty_and_a_pipe_is_answered_without_node_tty", async () => {
    const { child, fd } = await pipeToChild("process.stdin.resume()");
    expect(new FdOutputStream(fd, unused).isTTY).toBe(false);
    child.kill();
    child.stdin?.destroy();
    // /dev/null is a character device that is not a terminal: node:tty answers that one.
    const devNull = openSync("/dev/null", "w");
    expect(new FdOutputStream(devNull, unused).isTTY).toBe(false);
    closeSync(devNull);
  });

  test("a_reader_that_went_away_ends_the_output_quietly", async () => {
    const { child, fd } = await pipeToChild('require("node:fs").closeSync(0)');
    const out = new FdOutputStream(fd, unused);
    expect(out.write("nobody reads this\n")).toBe(false);
    expect(out.write("nor this\n")).toBe(false);
    child.kill();
    child.stdin?.destroy();
  });

  test("a_full_non_blocking_pipe_hands_the_rest_to_the_fallback_in_order", async () => {
    const { child, fd } = await pipeToChild("0");
    const later: Buffer[] = [];
    const out = new FdOutputStream(fd, () => ({
      write: (chunk: string | Uint8Array) => later.push(Buffer.from(chunk)),
    }));
    // Far more than a pipe holds; each character is 2 bytes, so a cut can fall inside one.
    const text = "é".repeat(1 << 20);
    expect(out.write(text)).toBe(true);
    expect(out.write("end")).toBe(true);
    const handed = Buffer.concat(later);
    expect(handed.length).toBeGreaterThan(0);
    expect(handed.length).toBeLessThan(2 << 20);
    // What the fallback got is exactly the tail of the bytes, then every later write.
    const all = Buffer.from(`${text}end`, "utf8");
    expect(handed.equals(all.subarray(all.length - handed.length))).toBe(true);
    child.kill();
    child.stdin?.destroy();
  });
});

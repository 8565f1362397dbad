import { describe, expect, test } from "vitest";
import { OutputCapture } from "./output-capture.ts";

describe("output capture", () => {
  test("output_within_the_limit_is_kept_whole", () => {
    const capture = new OutputCapture(16);
    capture.push(Buffer.from("hello "));
    capture.push(Buffer.from("world\n"));
    expect(capture.result("stdout")).toEqual({ text: "hello world\n", totalBytes: 12, omittedBytes: 0 });
  });

  test("longer_output_keeps_its_start_and_end_and_says_how_much_was_left_out", () => {
    const capture = new OutputCapture(8);
    for (const chunk of ["abc", "defgh", "ijklmnop", "qrstuvwxyz"]) capture.push(Buffer.from(chunk));
    const result = capture.result("stderr");
    expect(result.totalBytes).toBe(26);
    expect(result.omittedBytes).toBe(18);
    expect(result.text).toBe(
      "abcd\n[... 18 bytes of stderr left out here (26 bytes in all); write it to a file and read parts of it, or filter it (grep, head, tail) ...]\nwxyz",
    );
  });

  test("many_small_chunks_keep_only_the_last_bytes", () => {
    const capture = new OutputCapture(4);
    for (let i = 0; i < 10_000; i++) capture.push(Buffer.from(String(i % 10)));
    const result = capture.result("stdout");
    expect(result.text.startsWith("01\n[... 9996 bytes")).toBe(true);
    expect(result.text.endsWith("...]\n89")).toBe(true);
  });
});

import { execFile } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, expect, inject, test, vi } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { ChildWriter, childRecord } from "./__fixtures__/child-writer.ts";
import { closeTestStores, openTestStore, sharedConnectionString } from "./__fixtures__/stores.ts";

// Servers stopped and started, processes killed at random points: slow by design.
vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });

afterAll(closeTestStores);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const childStart = {
  type: "segment_start",
  systemPrompt: "You are a pod under test.\n",
  sources: [],
  createdAt: "2026-01-01T00:00:00Z",
};

/** Asks `child` to open `segmentId` until its answer is not LOCKED (the holder's lease ran out). */
async function openWhenFree(child: ChildWriter, segmentId: string): Promise<string> {
  for (;;) {
    const answer = await child.command(`open ${segmentId}`);
    if (!answer.startsWith("error SEGMENT_LOCKED")) return answer;
    await sleep(50);
  }
}

test("two_machines_one_pod_second_is_locked_takes_over_when_the_first_stops_and_the_first_is_fenced", async () => {
  const podId = `machines-${randomUUID()}`;
  const options = { connectionString: sharedConnectionString(), podId, mode: "commands", leaseMs: 1000 } as const;
  const first = new ChildWriter(options);
  const second = new ChildWriter(options);
  try {
    const segmentId = (await first.command("create")).split(" ")[1] ?? "";
    expect(await first.command("append 0")).toBe("ok 0");
    expect(await second.command(`open ${segmentId}`)).toMatch(/^error SEGMENT_LOCKED - .*only one writer/);
    expect(await first.command("append 1")).toBe("ok 1");

    // The first machine stops (a pause, a partition): no more heartbeats.
    first.kill("SIGSTOP");
    expect(await openWhenFree(second, segmentId)).toBe("ok 3 SEGMENT_LOCK_STALE");
    expect(await second.command("append 2")).toBe("ok 2");

    // The first comes back and tries to go on: fenced, nothing written, every time.
    first.kill("SIGCONT");
    expect(await first.command("append 100")).toMatch(/^error SEGMENT_FENCED false /);
    expect(await first.command("append 101")).toMatch(/^error SEGMENT_FENCED false /);
    expect(await second.command("append 3")).toBe("ok 3");

    const store = await openTestStore({ podId });
    expect((await store.readSegment(segmentId)).records).toEqual([childStart, ...[0, 1, 2, 3].map(childRecord)]);
  } finally {
    first.kill("SIGKILL");
    second.kill("SIGKILL");
  }
});

test("a_writer_killed_outright_is_replaced_after_its_lease_with_every_acknowledged_record", async () => {
  const podId = `killed-${randomUUID()}`;
  const connectionString = sharedConnectionString();
  const first = new ChildWriter({ connectionString, podId, mode: "append", leaseMs: 1000 });
  const ready = await first.waitFor((line) => line.startsWith("ready "));
  const segmentId = ready.split(" ")[1] ?? "";
  await first.waitFor((line) => line === "ack 9");
  first.kill("SIGKILL");
  await first.exited;
  const acked = first.acked();
  const second = new ChildWriter({ connectionString, podId, mode: "commands", leaseMs: 1000 });
  try {
    const opened = await openWhenFree(second, segmentId);
    const [, count, warnings] = opened.split(" ");
    expect(warnings).toBe("SEGMENT_LOCK_STALE");
    const stored = Number(count) - 1;
    expect([acked.length, acked.length + 1]).toContain(stored);
    expect(await second.command(`append ${stored}`)).toBe(`ok ${stored}`);
    const store = await openTestStore({ podId });
    expect((await store.readSegment(segmentId)).records).toEqual([
      childStart,
      ...Array.from({ length: stored + 1 }, (_, n) => childRecord(n)),
    ]);
  } finally {
    second.kill("SIGKILL");
  }
});

test("a_pod_continued_by_restore_in_another_process_keeps_its_prompt_byte_identical", async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), "insomnia-pg-pod-")));
  try {
    const pwd = join(root, "pod");
    await mkdir(join(pwd, ".insomnia", "prompts"), { recursive: true });
    await mkdir(join(root, "xdg"), { recursive: true });
    const main = join(pwd, ".insomnia", "prompts", "main.md");
    await writeFile(main, 'You are a pod in {{cwd}}, at {{datetime}}, with {{join tools ", "}}.\n');
    await writeFile(join(pwd, "AGENTS.md"), "Original project rules: ünïcödé ✓\n");
    const base = {
      connectionString: sharedConnectionString(),
      podId: `pod-${randomUUID()}`,
      pwd,
      env: { XDG_CONFIG_HOME: join(root, "xdg") },
    };
    const script = join(import.meta.dirname, "__fixtures__", "pod-child.mjs");
    const dist = join(inject("pg").distDir, "index.js");
    const run = async (life: string) => {
      const { stdout } = await promisify(execFile)(process.execPath, [script, dist, JSON.stringify({ ...base, life })]);
      return JSON.parse(stdout) as {
        prompts: string[];
        warnings: string[];
        starts: string[];
        counts: number[];
        segmentId: string;
      };
    };
    const first = await run("first");
    const prompt = first.prompts[0] ?? "";
    expect(prompt).toContain("Original project rules: ünïcödé ✓");
    expect(prompt).toContain("2025-01-02T03:04:05Z");
    expect(first.starts).toHaveLength(2);

    // What a re-render would pick up changes before the second life.
    await writeFile(join(pwd, "AGENTS.md"), "Changed rules.\n");
    await writeFile(main, "A changed instruction.\n");
    const second = await run("second");
    expect(second.segmentId).toBe(first.segmentId);
    expect(second.warnings).toEqual(["SOURCES_CHANGED"]);
    expect(second.prompts.length).toBeGreaterThanOrEqual(2);
    for (const seen of [...first.prompts, ...first.starts, ...second.prompts, ...second.starts]) {
      expect(seen).toBe(prompt);
    }
    // The second life appended to the latest segment, after what the first had stored.
    expect((second.counts[1] ?? 0) > (first.counts[1] ?? 0)).toBe(true);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

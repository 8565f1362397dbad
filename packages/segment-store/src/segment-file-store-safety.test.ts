import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readdir, rm, stat, writeFile } from "node:fs/promises";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { propertyRuns, SLOW_TEST_TIMEOUT_MS } from "../../../test/support/property-runs.ts";
import { BUILT_PACKAGE_URL } from "./__fixtures__/built-package.ts";
import { storeRejection } from "./__fixtures__/store-rejection.ts";
import { contentId } from "./pod-writer-lock.ts";
import { FileSegmentStore } from "./segment-file-store.ts";
import { formatSegmentId } from "./segment-id.ts";

const start = { type: "segment_start", systemPrompt: "p\n", sources: [], createdAt: "2026-01-01T00:00:00Z" } as const;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "insomnia-segment-safety-"));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const mode = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);

describe("FileSegmentStore on a directory that cannot be made (issue 27 item 5)", () => {
  it.skipIf(process.platform !== "linux")("a_store_under_proc_is_a_segment_io_error_at_once_not_a_spin", async () => {
    // Node 20's mkdir({ recursive: true }) loops forever here: /proc exists and refuses children.
    const store = new FileSegmentStore("/proc/nope/pod-abc");
    for (const attempt of [() => store.createSegment(start), () => store.lockPod()]) {
      const error = await storeRejection(attempt());
      expect(error.code).toBe("SEGMENT_IO");
      expect(error.message).toMatch(/create the segment directory/);
    }
  });
});

describe("FileSegmentStore file modes (issue 26 item 5)", () => {
  it("directories_it_creates_are_0700_and_files_0600_whatever_the_umask", async () => {
    const before = process.umask(0);
    try {
      const store = new FileSegmentStore(join(dir, "state", "insomnia", "pods", "pod-1"));
      const writer = await store.createSegment(start);
      expect(await mode(store.podLockFile)).toBe("600");
      await writer.append({ type: "message", message: { role: "user", content: "secret" } });
      await writer.close();
      for (const made of ["state", "state/insomnia", "state/insomnia/pods", "state/insomnia/pods/pod-1"]) {
        expect([made, await mode(join(dir, made))]).toEqual([made, "700"]);
      }
      expect(await mode(store.segmentFile(writer.segmentId))).toBe("600");
      // A umask that takes owner bits away does not make the store unusable or its files wider.
      process.umask(0o277);
      const next = await store.createSegment(start);
      expect(await mode(store.segmentFile(next.segmentId))).toBe("600");
      await next.close();
    } finally {
      process.umask(before);
    }
  });

  it("an_existing_directory_keeps_its_mode", async () => {
    const before = process.umask(0o022);
    try {
      const store = new FileSegmentStore(dir);
      const writer = await store.createSegment(start);
      await writer.close();
      expect(await mode(dir)).toBe("700"); // mkdtemp's own mode, left as it is
      const wide = join(dir, "wide");
      await import("node:fs/promises").then(({ mkdir }) => mkdir(wide, { mode: 0o750 }));
      await (await new FileSegmentStore(wide).createSegment(start)).close();
      expect(await mode(wide)).toBe("750");
    } finally {
      process.umask(before);
    }
  });
});

describe("FileSegmentStore debris of killed writers (issue 27 item 5)", () => {
  it("repeated_kills_during_segment_creation_leave_nothing_the_next_writer_does_not_remove", {
    timeout: SLOW_TEST_TIMEOUT_MS,
  }, async () => {
    // Each child creates segments as fast as it can and is killed at some point in that loop.
    const script = `
      const { FileSegmentStore } = await import(${JSON.stringify(BUILT_PACKAGE_URL)});
      const store = new FileSegmentStore(${JSON.stringify(dir)});
      const start = ${JSON.stringify(start)};
      let first = true;
      for (;;) {
        const lock = await store.lockPod().catch(() => undefined);
        if (lock === undefined) continue;
        const writer = await store.createSegment(start);
        if (first) { process.stdout.write("created\\n"); first = false; }
        await writer.close();
        await lock.release();
      }`;
    // A new process per kill: the quick run kills at each of the four points (kill % 4) once.
    for (let kill = 0; kill < propertyRuns(4, 12); kill += 1) {
      const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
      // Killed at once or after a few more creates: wherever the loop is then.
      for (let n = 0; n < kill % 4; n += 1) await new Promise((resolve) => setImmediate(resolve));
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    // And the debris every kind of kill leaves, planted so that each kind is surely there.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid ?? 0;
    const stale = `${dead}\n${hostname()}\nkilled\n`;
    await writeFile(join(dir, "pod.lock"), stale);
    const planted = [
      `${formatSegmentId(900)}.jsonl.0b5c3f2e-5d1a-4c2b-9f7e-1a2b3c4d5e6f.tmp`,
      `pod.lock.${dead}.0b5c3f2e-5d1a-4c2b-9f7e-1a2b3c4d5e6f.tmp`,
      `pod.lock.takeover-${contentId(stale)}-1`,
      `pod.lock.takeover-${contentId("an older lock")}-1`,
      `${formatSegmentId(1)}.lock`,
      `${formatSegmentId(1)}.lock.stale-0b5c3f2e`,
    ];
    for (const name of planted) await writeFile(join(dir, name), `${dead}\n${hostname()}\nx\n`);

    const store = new FileSegmentStore(dir);
    const segments = await store.listSegments();
    const lock = await store.lockPod();
    expect(lock.warnings.map((warning) => warning.code)).toEqual(["SEGMENT_LOCK_STALE"]);
    const left = (await readdir(dir)).filter((name) => name !== "pod.lock" && !name.endsWith(".jsonl"));
    expect(left).toEqual([]);
    const writer = await store.createSegment(start);
    // Ids of debris are never reused: the new segment sorts after every one of them.
    expect(Number(writer.segmentId.slice(4))).toBeGreaterThan(900);
    await writer.close();
    await lock.release();
    expect((await readdir(dir)).sort()).toEqual([...segments, writer.segmentId].map((id) => `${id}.jsonl`).sort());
  });

  it("a_lock_claimed_by_a_live_process_is_respected", async () => {
    // A live process is in the middle of taking a stale lock over: nobody else may.
    const dead = spawnSync(process.execPath, ["-e", ""]).pid ?? 0;
    const stale = `${dead}\n${hostname()}\nkilled\n`;
    await writeFile(join(dir, "pod.lock"), stale);
    await writeFile(join(dir, `pod.lock.takeover-${contentId(stale)}-1`), `${process.ppid}\n${hostname()}\nlive\n`);
    const error = await storeRejection(new FileSegmentStore(dir).lockPod());
    expect(error.code).toBe("SEGMENT_LOCKED");
    expect(error.message).toMatch(new RegExp(`being taken over by process ${process.ppid}`));
  });

  it("a_claim_left_by_a_dead_taker_does_not_block_the_next_one", async () => {
    const dead = spawnSync(process.execPath, ["-e", ""]).pid ?? 0;
    const stale = `${dead}\n${hostname()}\nkilled\n`;
    await writeFile(join(dir, "pod.lock"), stale);
    await writeFile(join(dir, `pod.lock.takeover-${contentId(stale)}-1`), `${dead}\n${hostname()}\ndead taker\n`);
    const store = new FileSegmentStore(dir);
    const lock = await store.lockPod();
    expect(lock.warnings.map((warning) => warning.code)).toEqual(["SEGMENT_LOCK_STALE"]);
    expect(await readdir(dir)).toEqual(["pod.lock"]);
    await lock.release();
    expect(await readdir(dir)).toEqual([]);
  });
});

import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { inject } from "vitest";
import { PostgresSegmentStore, type PostgresSegmentStoreOptions } from "../postgres-segment-store.ts";
import { type SegmentRecord, type SegmentStartRecord, SegmentStoreError } from "@insomnia/segment-store";

const opened: PostgresSegmentStore[] = [];

/** The shared test server's connection string. */
export function sharedConnectionString(): string {
  return inject("pg").connectionString;
}

/** A store of a new pod on the shared test server; closed by {@link closeTestStores}. */
export async function openTestStore(
  options: Partial<Omit<PostgresSegmentStoreOptions, "pool" | "connectionString">> & { connectionString?: string } = {},
): Promise<PostgresSegmentStore> {
  const store = await PostgresSegmentStore.open({
    connectionString: options.connectionString ?? sharedConnectionString(),
    podId: options.podId ?? `pod-${randomUUID()}`,
    ...(options.schema === undefined ? {} : { schema: options.schema }),
    ...(options.leaseMs === undefined ? {} : { leaseMs: options.leaseMs }),
    ...(options.resolveTimeoutMs === undefined ? {} : { resolveTimeoutMs: options.resolveTimeoutMs }),
  });
  opened.push(store);
  return store;
}

/** Closes every store opened by {@link openTestStore}. */
export async function closeTestStores(): Promise<void> {
  await Promise.all(opened.splice(0).map((store) => store.close().catch(() => undefined)));
}

/** The SegmentStoreError `promise` rejects with; fails the test if it resolves or rejects with something else. */
export async function storeRejection(promise: Promise<unknown>): Promise<SegmentStoreError> {
  const outcome = await promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  if (outcome.ok) throw new Error(`expected a SegmentStoreError, got a value: ${JSON.stringify(outcome.value)}`);
  if (!SegmentStoreError.is(outcome.error)) throw outcome.error;
  return outcome.error;
}

export const start: SegmentStartRecord = {
  type: "segment_start",
  systemPrompt: "You are a pod.\n\n---\n## Working boundaries\n\nReadable:\n  - /tmp/ワーク\n",
  sources: [{ ref: "$insomnia/default", file: "/opt/prompts/default.md", sha256: "ab".repeat(32) }],
  createdAt: "2025-01-02T03:04:05Z",
};

/** The `n`-th test message. */
export function message(n: number): SegmentRecord {
  return {
    type: "message",
    message: { role: n % 2 === 0 ? "user" : "assistant", content: `message ${n}: 日本語 🙂\n"q"` },
  };
}

/**
 * The part of a conformance context every PostgreSQL suite shares: a new pod behind
 * `connectionString`, `reopen` as another process's view (a new store with a new pool over the
 * same pod), and the worker-thread writer built from `distDir`.
 */
export async function conformancePod(connectionString: string, distDir: string, prefix: string) {
  const podId = `${prefix}-${randomUUID()}`;
  const stores: PostgresSegmentStore[] = [];
  const open = async (): Promise<PostgresSegmentStore> => {
    const store = await PostgresSegmentStore.open({ connectionString, podId });
    stores.push(store);
    return store;
  };
  return {
    podId,
    store: await open(),
    reopen: open,
    cleanup: async () => {
      await Promise.all(stores.map((store) => store.close()));
    },
    workerThread: {
      module: join(import.meta.dirname, "store-thread.mjs"),
      args: { dist: pathToFileURL(join(distDir, "index.js")).href, connectionString, podId },
    },
  };
}

import { describeSegmentStoreConformance } from "@insomnia/segment-store/testing";
import pg from "pg";
import { afterAll, beforeAll, inject } from "vitest";
import { conformancePod } from "./__fixtures__/stores.ts";

let admin: pg.Pool;
beforeAll(() => {
  admin = new pg.Pool({ connectionString: inject("pg").connectionString, max: 2 });
});
afterAll(async () => {
  await admin.end();
});

const segmentNo = (segmentId: string): string => String(Number(segmentId.slice(4)));

// Each test gets a pod of its own on the shared server; `reopen` is another process's view:
// a new store with a new pool over the same pod.
describeSegmentStoreConformance(
  "PostgresSegmentStore conformance",
  async () => {
    const { connectionString, distDir } = inject("pg");
    const { podId, ...context } = await conformancePod(connectionString, distDir, "conformance");
    return {
      ...context,
      damage: {
        async corruptMiddle(segmentId, seq) {
          // A row that is JSON but not a record of that place: what a hand edit or another program leaves.
          await admin.query(
            `UPDATE insomnia.records SET body = '{"type":"message"}' WHERE pod_id = $1 AND segment_no = $2 AND seq = $3`,
            [podId, segmentNo(segmentId), seq],
          );
        },
        async crashedLock(segmentId) {
          // A writer that took the leases and died: its tokens stay, its leases have run out.
          await admin.query(
            `INSERT INTO insomnia.pod_writers (pod_id, writer_token, writer_epoch, writer_host, writer_pid, lease_expires_at)
             VALUES ($1, gen_random_uuid(), 1, 'gone', 1, now() - interval '1 second')
             ON CONFLICT (pod_id) DO UPDATE SET writer_token = EXCLUDED.writer_token, writer_host = 'gone',
               writer_pid = 1, lease_expires_at = EXCLUDED.lease_expires_at`,
            [podId],
          );
          await admin.query(
            `UPDATE insomnia.segments SET writer_token = gen_random_uuid(), writer_host = 'gone', writer_pid = 1,
               lease_expires_at = now() - interval '1 second' WHERE pod_id = $1 AND segment_no = $2`,
            [podId, segmentNo(segmentId)],
          );
        },
        async snapshot(segmentId) {
          const { rows } = await admin.query(
            "SELECT seq::text, record_id::text, body::text FROM insomnia.records WHERE pod_id = $1 AND segment_no = $2 ORDER BY seq",
            [podId, segmentNo(segmentId)],
          );
          return rows;
        },
      },
    };
  },
  {
    skip: {
      corruptTail:
        "a PostgreSQL append is one transaction: it is stored whole or not at all, so there is no torn tail to recover",
    },
  },
);

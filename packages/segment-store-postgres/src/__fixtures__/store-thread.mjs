// Opens a PostgresSegmentStore in another worker_thread for the conformance suite.
// args: { dist: <built index.js URL>, connectionString, podId }
export async function openStore({ dist, connectionString, podId }) {
  const { PostgresSegmentStore } = await import(dist);
  return PostgresSegmentStore.open({ connectionString, podId });
}

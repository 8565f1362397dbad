// Opens a FileSegmentStore inside another worker_thread for the conformance suite.
// `bundle` is this package built to JavaScript (see build-bundle.ts): a worker_thread has no TypeScript loader.
export async function openStore({ bundle, dir }) {
  const { FileSegmentStore } = await import(bundle);
  return new FileSegmentStore(dir);
}

// Opens a FileSegmentStore inside another worker_thread for the conformance suite.
// `bundle` is the file: URL of this package's dist/index.js (see built-package.ts): a worker_thread has no TypeScript loader.
export async function openStore({ bundle, dir }) {
  const { FileSegmentStore } = await import(bundle);
  return new FileSegmentStore(dir);
}

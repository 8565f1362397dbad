// Preloaded into a `pod` run by bin.test.ts: on exit, prints on stderr whether Node's built-in
// undici (the global fetch, Headers, Response) was loaded.
process.on("exit", () => {
  const loaded = process.moduleLoadList.some((name) => name.includes("internal/deps/undici"));
  process.stderr.write(`undici loaded: ${loaded}\n`);
});

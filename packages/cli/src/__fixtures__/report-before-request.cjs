// Preloaded into a `pod` run by bin.test.ts: notes which of Node's modules were loaded when the
// first HTTP request was sent (the model request), and prints it on stderr at exit.
const { ClientRequest } = require("node:http");
const end = ClientRequest.prototype.end;
let seen;
ClientRequest.prototype.end = function (...args) {
  seen ??= process.moduleLoadList.slice();
  return end.apply(this, args);
};
process.on("exit", () => {
  const loaded = (part) => (seen ?? []).some((name) => name.includes(part));
  process.stderr.write(
    `before the request: web streams ${loaded("internal/webstreams/readablestream")}, crypto ${loaded("internal/crypto/")}\n`,
  );
});

// Preloaded into a `pod` run by bin.test.ts: notes which of Node's modules were loaded when the
// first bytes went out on a socket (the model request), and prints it on stderr at exit.
const net = require("node:net");
const write = net.Socket.prototype.write;
let seen;
net.Socket.prototype.write = function (...args) {
  seen ??= process.moduleLoadList.slice();
  return write.apply(this, args);
};
process.on("exit", () => {
  const loaded = (part) => (seen ?? []).some((name) => name.includes(part));
  process.stderr.write(
    `before the request: web streams ${loaded("internal/webstreams/")}, crypto ${loaded("internal/crypto/")}\n`,
  );
});

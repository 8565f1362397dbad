// Lines of code per package (non-blank lines of src/**/*.ts; tests and fixtures counted apart),
// written into bench/RESULTS.md so a change that grows a package shows in review.
//
//   node bench/lines.mjs            prints the markdown table
//   node bench/lines.mjs <repo>     the same for another checkout (a before/after comparison)
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { ROOT } from "./lib.mjs";

/** Non-blank lines of every `.ts` file under `dir`, split into source, tests (`*.test.ts`) and fixtures (`__fixtures__/`). */
function count(dir, into = { source: 0, tests: 0, fixtures: 0 }, inFixtures = false) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      count(path, into, inFixtures || name === "__fixtures__");
    } else if (name.endsWith(".ts")) {
      const lines = readFileSync(path, "utf8")
        .split("\n")
        .filter((line) => line.trim() !== "").length;
      if (inFixtures) into.fixtures += lines;
      else if (name.endsWith(".test.ts")) into.tests += lines;
      else into.source += lines;
    }
  }
  return into;
}

/** `{ name, source, tests, fixtures }` of each package of the checkout at `root`, by name. */
export function linesOfCode(root = ROOT) {
  const packages = join(root, "packages");
  return readdirSync(packages)
    .sort()
    .filter((name) => statSync(join(packages, name, "src"), { throwIfNoEntry: false })?.isDirectory())
    .map((name) => ({ name, ...count(join(packages, name, "src")) }));
}

/** The markdown table of {@link linesOfCode}, with a total row. */
export function linesTable(rows) {
  const total = rows.reduce(
    (sum, row) => ({
      source: sum.source + row.source,
      tests: sum.tests + row.tests,
      fixtures: sum.fixtures + row.fixtures,
    }),
    { source: 0, tests: 0, fixtures: 0 },
  );
  return [
    "| package | source | tests | test fixtures |",
    "|---|---|---|---|",
    ...rows.map((r) => `| ${r.name} | ${r.source} | ${r.tests} | ${r.fixtures} |`),
    `| **total** | ${total.source} | ${total.tests} | ${total.fixtures} |`,
  ].join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  process.stdout.write(`${linesTable(linesOfCode(process.argv[2] ?? ROOT))}\n`);
}

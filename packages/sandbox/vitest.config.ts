import { packageTests } from "../../test/support/package-tests.ts";
import { sandboxGate } from "../../test/support/sandbox-gate.ts";

const gate = sandboxGate();
// The one visible line of a machine without bubblewrap; every other test of the repository runs.
if (!gate.available) console.log(gate.line);

export default packageTests({
  // Tests that run bwrap are named *.sandbox.test.ts; without bubblewrap only those are left out.
  exclude: gate.available ? [] : ["src/**/*.sandbox.test.ts"],
  passWithNoTests: true,
  // After every other project, not beside it: the fork-bomb tests starve the machine for seconds.
  sequence: { groupOrder: 1 },
});

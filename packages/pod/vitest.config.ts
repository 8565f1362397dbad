import { packageTests } from "../../test/support/package-tests.ts";

export default packageTests();

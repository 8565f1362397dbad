import { packageTests } from "../../test/support/package-tests.ts";

export default packageTests({ globalSetup: ["src/__fixtures__/global-setup.ts"] });

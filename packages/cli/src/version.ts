import packageJson from "../package.json" with { type: "json" };

/** The version of @insomnia/cli, inlined from its package.json at build time. */
export const VERSION: string = packageJson.version;

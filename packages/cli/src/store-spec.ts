import { CliError } from "./cli-error.ts";

/** The URL schemes `--store` and `INSOMNIA_STORE` take; anything else with `://` is a mistake, not a directory. */
export const STORE_SCHEMES = ["postgres", "postgresql"] as const;

/**
 * What a store spec names: a PostgreSQL database (`postgres://…`, `postgresql://…`) or a
 * directory. `mysql://x` would otherwise become the relative directory `mysql:/x`, so an
 * unknown scheme is a usage error naming the supported ones, and a port that is not 1-65535
 * is refused here rather than reported as an unreachable server.
 */
export function storeSpecKind(spec: string, from: "--store" | "INSOMNIA_STORE"): "postgres" | "directory" {
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(spec)?.[1];
  if (scheme === undefined) return "directory";
  const supported = `a directory or ${STORE_SCHEMES.map((s) => `${s}://`).join(", ")}`;
  if (!(STORE_SCHEMES as readonly string[]).includes(scheme.toLowerCase())) {
    throw new CliError(
      "USAGE",
      `${from} ${scheme}://…: the scheme "${scheme}" is not supported; use ${supported} (see 'pod run --help')`,
    );
  }
  // The authority: after "//", up to the first "/", "?" or "#"; credentials end at the last "@".
  const authority = spec.slice(scheme.length + 3).split(/[/?#]/, 1)[0] ?? "";
  const hostPort = authority.slice(authority.lastIndexOf("@") + 1);
  const port = /^(?:\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(hostPort)?.[1];
  if (port !== undefined && port !== "" && (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535)) {
    throw new CliError(
      "USAGE",
      `${from} ${scheme}://…: the port "${port}" is not a number from 1 to 65535; fix the URL (the default port is 5432)`,
    );
  }
  return "postgres";
}

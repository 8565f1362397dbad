import type { DeepReadonly, ManifestScopeRule, PartialManifest } from "./types.ts";

/** A layer under construction: the same shape, writable at the top two levels. */
type Mutable<T> = { -readonly [K in keyof T]: T[K] extends object ? { -readonly [J in keyof T[K]]: T[K][J] } : T[K] };

/** Merges layers lowest first: scalars from the upper layer win (`provider` and `worker.run_command` key by key), scope rules accumulate. */
export function merge(...layers: readonly PartialManifest[]): PartialManifest {
  const out: Mutable<PartialManifest> = {};
  for (const layer of layers) {
    if (layer.pod !== undefined) out.pod = { ...out.pod, ...defined(layer.pod) };
    if (layer.worker !== undefined) {
      const runCommand = layer.worker.run_command;
      out.worker = {
        ...out.worker,
        ...defined(layer.worker),
        // worker.run_command merges key by key, like provider: an overlay's timeout keeps the layer's network.
        ...(runCommand === undefined ? {} : { run_command: { ...out.worker?.run_command, ...defined(runCommand) } }),
      };
    }
    if (layer.provider !== undefined) out.provider = { ...out.provider, ...defined(layer.provider) };
    if (layer.skills !== undefined) out.skills = { ...out.skills, ...defined(layer.skills) };
    // A server is one unit: a higher layer that names it replaces it whole.
    if (layer.mcp_servers !== undefined)
      out.mcp_servers = { ...out.mcp_servers, ...(defined(layer.mcp_servers) as typeof layer.mcp_servers) };
    if (layer.scope !== undefined) {
      const scope: Mutable<NonNullable<PartialManifest["scope"]>> = { ...out.scope };
      if (layer.scope.allow !== undefined) scope.allow = [...(scope.allow ?? []), ...layer.scope.allow.map(copyRule)];
      if (layer.scope.deny !== undefined) scope.deny = [...(scope.deny ?? []), ...layer.scope.deny.map(copyRule)];
      out.scope = scope;
    }
  }
  return out;
}

function copyRule(rule: DeepReadonly<ManifestScopeRule>): ManifestScopeRule {
  return { ...defined(rule) } as ManifestScopeRule;
}

/** A shallow copy without keys whose value is undefined (a consumer-built layer may have them). */
function defined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as Partial<T>;
}

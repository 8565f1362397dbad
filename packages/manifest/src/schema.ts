import { isAbsolute } from "node:path";
import { WORKER_TOOL_NAMES } from "./defaults.ts";
import * as v from "valibot";

function noNul(value: string): boolean {
  return !value.includes("\u0000");
}

const MAPPING = "a mapping";

/** The expectation phrase of one `worker.tools` entry (check-layer adds the did-you-mean). */
export const TOOL_NAME_PHRASE = `one of the tool names ${WORKER_TOOL_NAMES.join(", ")}`;

/** What `worker.compact_at` must be: used exactly as written, so a value outside the range is refused, never clamped. */
export const COMPACT_AT_PHRASE =
  "a fraction of the context window from 0.5 to 0.95 (it is used as written, never clamped)";

/** What an `mcp_servers` key may be: it becomes part of tool names (`mcp__<name>__<tool>`). */
export const MCP_SERVER_NAME = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*$/;

/** Exactly one transport, and only that transport's keys. */
function oneTransport(value: object): boolean {
  const server = value as Record<string, unknown>;
  const stdio = ["command", "args", "env", "cwd"].some((key) => server[key] !== undefined);
  const http = ["url", "headers_from_env"].some((key) => server[key] !== undefined);
  return stdio ? server.command !== undefined && !http : server.url !== undefined;
}

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" || url.protocol === "https:";
  } catch {
    return false;
  }
}

/** One manifest layer as written: strict objects, every key optional. */
function buildLayerSchema() {
  // Each message is the expectation phrase used in "<key> must be <phrase>, got <value>".
  const nonEmptyString = (phrase: string) => v.pipe(v.string(phrase), v.nonEmpty(phrase), v.check(noNul, phrase));
  const positiveInteger = (phrase: string) => v.pipe(v.number(phrase), v.safeInteger(phrase), v.minValue(1, phrase));
  // A price in USD per million tokens; 0 is allowed (a free local model), never negative or infinite.
  const price = v.pipe(
    v.number("a number of USD per million tokens (0 or more)"),
    v.check((n: number) => Number.isFinite(n), "a number of USD per million tokens (0 or more)"),
    v.minValue(0, "a number of USD per million tokens (0 or more)"),
  );

  const scopeRule = v.strictObject(
    {
      target: nonEmptyString("a non-empty path"),
      permission: v.picklist(["read", "write"], '"read" or "write"'),
      recursive: v.optional(v.boolean("true or false")),
    },
    "a mapping with target and permission",
  );
  const ruleList = v.array(scopeRule, "a list of rules");

  return v.strictObject(
    {
      pod: v.optional(
        v.strictObject(
          {
            name: v.optional(nonEmptyString("a non-empty string")),
            pwd: v.optional(
              v.pipe(
                v.string("an absolute path"),
                v.check(isAbsolute, "an absolute path"),
                v.check(noNul, "an absolute path"),
              ),
            ),
          },
          MAPPING,
        ),
      ),
      worker: v.optional(
        v.strictObject(
          {
            instruction: v.optional(
              nonEmptyString('a non-empty prompt reference such as "$insomnia/default" or "$workspace/<name>"'),
            ),
            max_tokens: v.optional(positiveInteger("a positive whole number")),
            max_turns: v.optional(positiveInteger("a positive whole number")),
            temperature: v.optional(
              v.pipe(
                v.number("a number from 0 to 2"),
                v.minValue(0, "a number from 0 to 2"),
                v.maxValue(2, "a number from 0 to 2"),
              ),
            ),
            tools: v.optional(
              v.array(v.picklist(WORKER_TOOL_NAMES, TOOL_NAME_PHRASE), "a list of tool names (write [] for none)"),
            ),
            compact_at: v.optional(
              v.pipe(
                v.number(COMPACT_AT_PHRASE),
                v.minValue(0.5, COMPACT_AT_PHRASE),
                v.maxValue(0.95, COMPACT_AT_PHRASE),
              ),
            ),
            compact_instruction: v.optional(
              nonEmptyString('a non-empty prompt reference such as "$insomnia/compact" or "$workspace/<name>"'),
            ),
            run_command: v.optional(
              v.strictObject(
                {
                  timeout_ms: v.optional(positiveInteger("a positive whole number of milliseconds")),
                  network: v.optional(v.boolean("true or false")),
                },
                MAPPING,
              ),
            ),
          },
          MAPPING,
        ),
      ),
      scope: v.optional(v.strictObject({ allow: v.optional(ruleList), deny: v.optional(ruleList) }, MAPPING)),
      provider: v.optional(
        v.strictObject(
          {
            kind: v.optional(nonEmptyString("a non-empty string")),
            model: v.optional(nonEmptyString("a non-empty string")),
            base_url: v.optional(nonEmptyString("a non-empty string")),
            context_window: v.optional(positiveInteger("a positive whole number of tokens")),
            api_key_file: v.optional(nonEmptyString("a non-empty path")),
            pricing: v.optional(
              v.strictObject(
                {
                  input: v.optional(price),
                  output: v.optional(price),
                  cache_read: v.optional(price),
                  cache_write: v.optional(price),
                },
                "a mapping of USD per million tokens: input, output, cache_read, cache_write",
              ),
            ),
            reasoning: v.optional(
              v.strictObject(
                {
                  effort: v.picklist(["low", "medium", "high"], '"low", "medium" or "high"'),
                  budget_tokens: v.optional(positiveInteger("a positive whole number")),
                },
                MAPPING,
              ),
            ),
          },
          MAPPING,
        ),
      ),
      skills: v.optional(v.strictObject({ budget: v.optional(positiveInteger("a positive whole number")) }, MAPPING)),
      mcp_servers: v.optional(
        v.record(
          v.pipe(
            v.string("a server name"),
            v.regex(
              MCP_SERVER_NAME,
              "a server name of letters, digits, - and single _ (it becomes part of tool names)",
            ),
          ),
          v.pipe(
            v.strictObject(
              {
                command: v.optional(nonEmptyString("a non-empty command")),
                args: v.optional(v.array(v.string("a string"), "a list of strings")),
                env: v.optional(v.record(v.string(), v.string("a string"), "a mapping of variable names to strings")),
                cwd: v.optional(nonEmptyString("a non-empty path")),
                url: v.optional(
                  v.pipe(
                    nonEmptyString("an http:// or https:// URL"),
                    v.check(isHttpUrl, "an http:// or https:// URL"),
                  ),
                ),
                headers_from_env: v.optional(
                  v.record(
                    v.string(),
                    nonEmptyString("the name of an environment variable"),
                    "a mapping of header names to environment variable names",
                  ),
                ),
                startup_timeout_ms: v.optional(positiveInteger("a positive whole number of milliseconds")),
                tool_timeout_ms: v.optional(positiveInteger("a positive whole number of milliseconds")),
                enabled_tools: v.optional(v.array(nonEmptyString("a tool name"), "a list of tool names")),
                disabled_tools: v.optional(v.array(nonEmptyString("a tool name"), "a list of tool names")),
              },
              MAPPING,
            ),
            v.check(
              (server) => oneTransport(server),
              "a server with either command (+ args, env, cwd: stdio) or url (+ headers_from_env: streamable HTTP), not both",
            ),
          ),
          "a mapping of server names to servers",
        ),
      ),
    },
    MAPPING,
  );
}

/** The type of the layer schema: what PartialManifest and PodManifest are derived from. */
export type LayerSchema = ReturnType<typeof buildLayerSchema>;

let built: LayerSchema | undefined;

/** The layer schema, built on first use (a run without a manifest layer never builds it). */
export function layerSchema(): LayerSchema {
  built ??= buildLayerSchema();
  return built;
}

interface SchemaShape {
  type: string;
  entries?: Record<string, SchemaShape>;
  wrapped?: SchemaShape;
  item?: SchemaShape;
  /** The value schema of a record (`mcp_servers`). */
  value?: SchemaShape;
}

/** Known keys of the mapping at `path` in the layer schema, or undefined when it is not a mapping. */
export function knownKeysAt(path: readonly (string | number)[]): string[] | undefined {
  let schema: SchemaShape | undefined = layerSchema() as unknown as SchemaShape;
  for (const segment of path) {
    schema = unwrap(schema);
    if (schema?.type === "strict_object") {
      const entries: Record<string, SchemaShape> = schema.entries ?? {};
      schema = Object.hasOwn(entries, segment) ? entries[String(segment)] : undefined;
    } else if (schema?.type === "array") schema = schema.item;
    else if (schema?.type === "record") schema = schema.value;
    else return undefined;
  }
  schema = unwrap(schema);
  return schema?.type === "strict_object" && schema.entries !== undefined ? Object.keys(schema.entries) : undefined;
}

function unwrap(schema: SchemaShape | undefined): SchemaShape | undefined {
  let current = schema;
  while (current !== undefined && (current.type === "optional" || current.type === "exact_optional")) {
    current = current.wrapped;
  }
  return current;
}

import { expect, test } from "vitest";
import { ManifestError } from "./manifest-error.ts";
import { merge } from "./merge.ts";
import { parseManifestLayer } from "./parse-manifest-layer.ts";
import { resolveManifest } from "./resolve-manifest.ts";

const FILE = ".insomnia/pod.yaml";

function failure(text: string): ManifestError {
  try {
    parseManifestLayer(text, FILE);
  } catch (error) {
    if (ManifestError.is(error)) return error;
    throw error;
  }
  throw new Error("expected a ManifestError");
}

test("mcp_servers_resolve_with_default_timeouts", () => {
  const layer = parseManifestLayer(
    [
      "mcp_servers:",
      "  github:",
      "    command: npx",
      '    args: ["-y", "some-server"]',
      "    env: { LOG: quiet }",
      "    enabled_tools: [search]",
      "  docs:",
      "    url: https://example.test/mcp",
      "    headers_from_env: { Authorization: DOCS_TOKEN }",
      "    startup_timeout_ms: 500",
      "",
    ].join("\n"),
    FILE,
  );
  const manifest = resolveManifest(layer, { cwd: "/work" });
  expect(manifest.mcp_servers).toEqual({
    github: {
      command: "npx",
      args: ["-y", "some-server"],
      env: { LOG: "quiet" },
      enabled_tools: ["search"],
      startup_timeout_ms: 10_000,
      tool_timeout_ms: 60_000,
    },
    docs: {
      url: "https://example.test/mcp",
      headers_from_env: { Authorization: "DOCS_TOKEN" },
      startup_timeout_ms: 500,
      tool_timeout_ms: 60_000,
    },
  });
  expect(resolveManifest({}, { cwd: "/work" }).mcp_servers).toEqual({});
});

test("a_higher_layer_replaces_a_server_whole", () => {
  const user = parseManifestLayer("mcp_servers:\n  a: { command: one, args: [x] }\n  b: { command: two }\n", FILE);
  const project = parseManifestLayer("mcp_servers:\n  a: { url: http://127.0.0.1:1/mcp }\n", FILE);
  expect(merge(user, project).mcp_servers).toEqual({
    a: { url: "http://127.0.0.1:1/mcp" },
    b: { command: "two" },
  });
});

test("a_server_with_both_or_neither_transport_is_refused_at_its_position", () => {
  const both = failure("mcp_servers:\n  a:\n    command: x\n    url: http://127.0.0.1/mcp\n");
  expect(both.code).toBe("INVALID_VALUE");
  expect(both.line).toBe(3);
  expect(both.message).toContain("either command");
  expect(failure("mcp_servers:\n  a:\n    args: [x]\n").message).toContain("either command");
});

test("bad_server_names_keys_and_urls_are_refused", () => {
  expect(failure("mcp_servers:\n  a__b: { command: x }\n").message).toContain("single _");
  expect(failure("mcp_servers:\n  a: { command: x, comand: y }\n").code).toBe("UNKNOWN_KEY");
  expect(failure("mcp_servers:\n  a: { url: ftp://x }\n").message).toContain("http:// or https://");
  expect(failure("mcp_servers:\n  a: { command: x, startup_timeout_ms: 0 }\n").message).toContain("milliseconds");
});

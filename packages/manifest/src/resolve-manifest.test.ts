import { describe, expect, test } from "vitest";
import { DEFAULT_INSTRUCTION } from "./defaults.ts";
import { ManifestError } from "./manifest-error.ts";
import { resolveManifest } from "./resolve-manifest.ts";
import { merge } from "./merge.ts";
import type { PartialManifest } from "./types.ts";

describe("resolveManifest", () => {
  test("resolving_an_empty_layer_applies_the_defaults_and_anything_else_is_still_checked", () => {
    const cwd = "/srv/p";
    expect(resolveManifest({}, { cwd }).scope.allow).toEqual([{ target: cwd, permission: "write", recursive: true }]);
    for (const bad of [[], Object.create({ pod: { name: "" } }) as object, { worker: [] }]) {
      let error: unknown;
      try {
        resolveManifest(bad as never, { cwd });
      } catch (caught) {
        error = caught;
      }
      expect(ManifestError.is(error), JSON.stringify(bad)).toBe(true);
    }
  });

  test("empty_layer_gets_every_default", () => {
    expect(resolveManifest({}, { cwd: "/work/project" })).toEqual({
      pod: { name: "project", pwd: "/work/project" },
      worker: {
        instruction: DEFAULT_INSTRUCTION,
        max_tokens: 8192,
        max_turns: 50,
        compact_at: 0.8,
        compact_instruction: "$insomnia/compact",
        temperature: 0,
        tools: ["edit_file", "list_dir", "read_file", "write_file"],
        run_command: { timeout_ms: 120_000, network: false },
      },
      scope: { allow: [{ target: "/work/project", permission: "write", recursive: true }], deny: [] },
      skills: { budget: 8000 },
      mcp_servers: {},
    });
    expect(DEFAULT_INSTRUCTION).toBe("$insomnia/default");
  });

  test("skills_budget_from_the_upper_layer_wins", () => {
    const manifest = resolveManifest(merge({ skills: { budget: 500 } }, { skills: { budget: 1200 } }), {
      cwd: "/work/project",
    });
    expect(manifest.skills).toEqual({ budget: 1200 });
  });

  test("pwd_from_a_layer_replaces_cwd_and_names_the_pod", () => {
    const manifest = resolveManifest({ pod: { pwd: "/srv/other/" } }, { cwd: "/work/project" });
    expect(manifest.pod).toEqual({ name: "other", pwd: "/srv/other" });
    expect(manifest.scope.allow).toEqual([{ target: "/srv/other", permission: "write", recursive: true }]);
  });

  test("declared_allow_rules_suppress_the_default_rule_and_stay_as_written", () => {
    const manifest = resolveManifest({ scope: { allow: [{ target: "src", permission: "read" }] } }, { cwd: "/p" });
    expect(manifest.scope.allow).toEqual([{ target: "src", permission: "read" }]);
  });

  test("deny_rules_alone_still_get_the_default_allow_rule", () => {
    const manifest = resolveManifest({ scope: { deny: [{ target: ".git", permission: "write" }] } }, { cwd: "/p" });
    expect(manifest.scope).toEqual({
      allow: [{ target: "/p", permission: "write", recursive: true }],
      deny: [{ target: ".git", permission: "write" }],
    });
  });

  test("root_pwd_gets_the_fallback_name", () => {
    expect(resolveManifest({}, { cwd: "/" }).pod.name).toBe("pod");
  });

  test("result_is_deep_frozen", () => {
    const manifest = resolveManifest({ scope: { allow: [{ target: "/a", permission: "read" }] } }, { cwd: "/p" });
    expect(Object.isFrozen(manifest)).toBe(true);
    expect(Object.isFrozen(manifest.worker)).toBe(true);
    expect(Object.isFrozen(manifest.scope.allow)).toBe(true);
    expect(Object.isFrozen(manifest.scope.allow[0])).toBe(true);
  });

  test("input_is_not_frozen_or_shared", () => {
    const partial: PartialManifest = { scope: { allow: [{ target: "/a", permission: "read" }] } };
    const manifest = resolveManifest(partial, { cwd: "/p" });
    expect(Object.isFrozen(partial.scope!.allow![0])).toBe(false);
    expect(manifest.scope.allow[0]).not.toBe(partial.scope!.allow![0]);
  });

  test("provider_without_model_is_invalid", () => {
    let caught: unknown;
    try {
      resolveManifest({ provider: { kind: "openai" } }, { cwd: "/p" });
    } catch (error) {
      caught = error;
    }
    expect(ManifestError.is(caught) && [caught.code, caught.key]).toEqual(["INVALID_VALUE", "provider.model"]);
  });

  test("complete_provider_is_kept", () => {
    const manifest = resolveManifest({ provider: { kind: "openai", model: "m", api_key_file: "/k" } }, { cwd: "/p" });
    expect(manifest.provider).toEqual({ kind: "openai", model: "m", api_key_file: "/k" });
  });

  test("consumer_built_layer_is_checked", () => {
    const bad = { worker: { max_turns: 0 } } as PartialManifest;
    expect(() => resolveManifest(bad, { cwd: "/p" })).toThrow(
      /worker\.max_turns must be a positive whole number, got 0/,
    );
    const unknown = { worker: { turns: 3 } } as unknown as PartialManifest;
    expect(() => resolveManifest(unknown, { cwd: "/p" })).toThrow(/unknown key "turns" in worker/);
  });
});

import { createHash } from "node:crypto";
import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { loadManifest } from "@insomnia/manifest";
import { FileSegmentStore, Pod } from "@insomnia/pod";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, test, vi } from "vitest";
import { SLOW_TEST_TIMEOUT_MS } from "../../../../test/support/property-runs.ts";
import { runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

const { box, pod } = useSandbox();
const STACK_LINE = /^\s+at /m;
const NOW = "2026-01-02T03:04:05Z";

/** A workspace whose instruction uses all three prefixes' own files, nested unqualified includes and every variable. */
async function goldenWorkspace(): Promise<void> {
  await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
  await box.write(
    ".insomnia/prompts/main.md",
    [
      "# Main",
      "Now: {{date}} {{time}} ({{datetime}}) in {{cwd}}.",
      '{{> "rules"}}',
      '{{> "parts/intro"}}',
      '{{> "$user/style"}}',
      'Tools: {{join tools ", "}}.',
      'Writable: {{join scope.writable ", "}}.',
      "",
    ].join("\n"),
  );
  await box.write(".insomnia/prompts/rules.md", "Rule: be careful.\n");
  await box.write(".insomnia/prompts/parts/intro.md", 'Intro.\n{{> "detail"}}\n');
  await box.write(".insomnia/prompts/parts/detail.md", "Detail from parts/detail.\n");
  await box.write("insomnia/prompts/style.md", "Style: be brief.\n", box.xdg);
  await box.write("AGENTS.md", "# Agents\n\nUse pnpm.\n");
}

function goldenPrompt(ws: string): string {
  return `# Main
Now: 2026-01-02 03:04:05 (2026-01-02T03:04:05Z) in ${ws}.
Rule: be careful.
Intro.
Detail from parts/detail.
Style: be brief.
Tools: read_file, write_file.
Writable: ${ws}.

---
## Working boundaries

Readable:
  - ${ws}
Writable:
  - ${ws}

---
## Project instructions (AGENTS.md)

# Agents

Use pnpm.
`;
}

describe("pod prompt", () => {
  test("golden_prompt_with_includes_across_prefixes_and_agents_md", async () => {
    await goldenWorkspace();
    const run = await pod("prompt", "--now", NOW, "--tool", "read_file", "--tool", "write_file");
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(goldenPrompt(box.ws));
  });

  test("tools_are_sorted_and_offsets_in_now_are_converted_to_utc", async () => {
    await goldenWorkspace();
    const run = await pod(
      "prompt",
      "--now",
      "2026-01-02T05:04:05+02:00",
      "--tool",
      "write_file",
      "--tool",
      "read_file",
    );
    expect(run.stdout).toBe(goldenPrompt(box.ws));
    // A tool server holds each name once, so a repeated --tool is one tool.
    const repeated = await pod(
      "prompt",
      "--now",
      NOW,
      "--tool",
      "write_file",
      "--tool",
      "read_file",
      "--tool",
      "read_file",
    );
    expect(repeated.stdout).toBe(goldenPrompt(box.ws));
  });

  test("prompt_equals_what_a_pod_hands_its_worker", async () => {
    await goldenWorkspace();
    const run = await pod("prompt", "--now", NOW, "--tool", "read_file", "--tool", "write_file");

    const client = new ScriptedLlmClient([{ content: "done" }]);
    const worker = new Worker({ client });
    for (const name of ["write_file", "read_file"]) {
      worker.tools.register({ name, description: name, inputSchema: { type: "object" }, execute: () => "" });
    }
    const { manifest } = await loadManifest({ cwd: box.ws, env: box.env });
    const instance = await Pod.fromManifest(manifest, {
      worker,
      store: new FileSegmentStore(join(box.home, "segments")),
      clock: { now: () => new Date(NOW) },
      env: box.env,
    });
    await instance.run("hello");
    expect(client.requests[0]?.systemPrompt).toBe(run.stdout);
    expect(worker.getSystemPrompt()).toBe(run.stdout);
  });

  test("without_tool_flags_the_template_sees_the_manifest_worker_tools", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    await box.write(".insomnia/prompts/main.md", 'Tools: {{join tools ", "}}.{{#unless tools}}none{{/unless}}\n');
    const byDefault = await pod("prompt", "--now", NOW);
    expect(byDefault.stdout.split("\n")[0]).toBe("Tools: edit_file, list_dir, read_file, write_file.");
    const chosen = await pod("prompt", "--now", NOW, "--overlay", "worker.tools = [write_file, read_file]");
    expect(chosen.stdout.split("\n")[0]).toBe("Tools: read_file, write_file.");
    const none = await pod("prompt", "--now", NOW, "--overlay", "worker.tools = []");
    expect(none.stdout.split("\n")[0]).toBe("Tools: .none");
    // --tool replaces the manifest's list.
    const flagged = await pod("prompt", "--now", NOW, "--tool", "list_dir");
    expect(flagged.stdout.split("\n")[0]).toBe("Tools: list_dir.");
  });

  test("builtin_default_renders_with_no_insomnia_directory", async () => {
    const run = await pod("prompt", "--now", NOW, "--tool", "read_file");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    expect(run.stdout).not.toContain("{{");
    expect(run.stdout).toContain(box.ws);
    expect(
      run.stdout.endsWith(`\n\n---\n## Working boundaries\n\nReadable:\n  - ${box.ws}\nWritable:\n  - ${box.ws}\n`),
    ).toBe(true);
  });

  test("workspace_file_can_include_the_builtin_default", async () => {
    await box.write(".insomnia/prompts/main.md", '{{> "$insomnia/default"}}\nAlso: run the tests.\n');
    const withInclude = await pod("prompt", "--now", NOW, "--overlay", 'worker.instruction = "$workspace/main"');
    const plain = await pod("prompt", "--now", NOW);
    expect([withInclude.code, withInclude.stderr]).toEqual([0, ""]);
    const [body, boundaries] = plain.stdout.split("\n\n---\n## Working boundaries\n\n");
    expect(withInclude.stdout).toBe(`${body}\nAlso: run the tests.\n\n---\n## Working boundaries\n\n${boundaries}`);
  });

  test("cwd_flag_manifest_flag_and_overlays_select_the_instruction", async () => {
    await goldenWorkspace();
    await box.write("insomnia/prompts/other.md", "Other instruction.\n", box.xdg);
    await box.write("alt.yaml", 'worker:\n  instruction: "$user/other"\n');
    const elsewhere = { cwd: box.home, env: box.env };

    const viaCwd = await runPodInProcess(
      ["prompt", "--cwd", box.ws, "--now", NOW, "--tool", "read_file", "--tool", "write_file"],
      elsewhere,
    );
    expect(viaCwd.stdout).toBe(goldenPrompt(box.ws));

    const viaManifest = await pod("prompt", "--manifest", "alt.yaml", "--now", NOW);
    expect(viaManifest.stdout.startsWith("Other instruction.\n\n---\n## Working boundaries\n")).toBe(true);

    const viaOverlay = await pod(
      "prompt",
      "--now",
      NOW,
      "--overlay",
      'worker.instruction = "$user/style"',
      "--overlay",
      "worker.max_turns = 3",
    );
    expect(viaOverlay.stdout.startsWith("Style: be brief.\n\n---\n## Working boundaries\n")).toBe(true);
  });

  test("without_now_the_clock_is_used", async () => {
    await box.write(".insomnia/prompts/main.md", "{{date}}");
    const before = new Date().toISOString().slice(0, 10);
    const run = await pod("prompt", "--overlay", 'worker.instruction = "$workspace/main"');
    const after = new Date().toISOString().slice(0, 10);
    expect([before, after]).toContain(run.stdout.slice(0, 10));
  });

  test("no_newline_is_added_to_a_prompt", async () => {
    await box.write(".insomnia/prompts/main.md", "Only this.");
    const run = await pod("prompt", "--now", NOW, "--overlay", 'worker.instruction = "$workspace/main"');
    expect(run.stdout).toBe(
      `Only this.\n\n---\n## Working boundaries\n\nReadable:\n  - ${box.ws}\nWritable:\n  - ${box.ws}\n`,
    );
  });

  test("agents_md_warning_goes_to_stderr_and_the_prompt_still_prints", async () => {
    await writeFile(join(box.ws, "AGENTS.md"), Buffer.from([0x66, 0x6f, 0xff, 0xfe, 0x0a]));
    const run = await pod("prompt", "--now", NOW);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain("## Project instructions (AGENTS.md)");
    expect(run.stderr).toMatch(/^pod: .*AGENTS\.md: warning: AGENTS_MD_NOT_UTF8: /);
  });

  test("template_error_is_reported_with_its_position_and_no_stack", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    const file = await box.write(".insomnia/prompts/main.md", "line one\n{{#if tools}}\nunclosed\n");
    const run = await pod("prompt", "--now", NOW);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(new RegExp(`^pod: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+:\\d+: SYNTAX: `));
    expect(run.stderr).not.toMatch(STACK_LINE);
  });

  test("unknown_variable_in_a_nested_include_names_that_file", async () => {
    await box.write(".insomnia/prompts/main.md", '{{> "inner"}}\n');
    const inner = await box.write(".insomnia/prompts/inner.md", "ok\n{{#if tool}}x{{/if}}\n");
    const run = await pod("prompt", "--overlay", 'worker.instruction = "$workspace/main"');
    expect(run.code).toBe(1);
    expect(run.stderr.startsWith(`pod: ${inner}:2:`)).toBe(true);
    expect(run.stderr).toContain("UNKNOWN_VARIABLE");
    expect(run.stderr).not.toMatch(STACK_LINE);
  });

  test("missing_include_and_bad_manifest_exit_1", async () => {
    await box.write(".insomnia/prompts/main.md", '{{> "$user/missing"}}\n');
    const missing = await pod("prompt", "--overlay", 'worker.instruction = "$workspace/main"');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(join(box.xdg, "insomnia", "prompts", "missing.md"));
    expect(missing.stderr).not.toMatch(STACK_LINE);

    const noManifest = await pod("prompt", "--manifest", "nope.yaml");
    expect(noManifest.code).toBe(1);
    expect(noManifest.stderr).toMatch(/READ_FAILED/);

    const badOverlay = await pod("prompt", "--overlay", "worker.max_turns = many");
    expect(badOverlay.code).toBe(1);
    expect(badOverlay.stderr).toMatch(/^pod: --overlay:1:\d+: INVALID_OVERLAY: /);

    await box.write(".insomnia/pod.yaml", "worker:\n  system_prompt: hi\n");
    const moved = await pod("prompt");
    expect(moved.code).toBe(1);
    expect(moved.stderr).toMatch(/^pod: \.insomnia\/pod\.yaml:2:3: SYSTEM_PROMPT_MOVED: /);
    expect(moved.stderr).not.toMatch(STACK_LINE);
  });
});

describe("pod prompt with an instruction that cannot be loaded", () => {
  // --json and --explain print their object only on success; the error is the same line on stderr.
  const modes = [[], ["--json"], ["--explain"]] as const;

  test("unknown_prefix_is_reported_at_the_project_manifest_value", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$foo/x"\n');
    for (const mode of modes) {
      const run = await pod("prompt", "--now", NOW, ...mode);
      expect(run).toEqual({
        code: 1,
        stdout: "",
        stderr:
          'pod: .insomnia/pod.yaml:2:16: INCLUDE_FAILED: [UNKNOWN_PREFIX] cannot load instruction "$foo/x": unknown prefix "$foo" in prompt reference "$foo/x"; ' +
          "use $insomnia/ (builtin), $user/ (your config dir) or $workspace/ (<cwd>/.insomnia/prompts)\n",
      });
    }
  });

  test("missing_workspace_file_is_reported_at_the_manifest_value_with_the_path", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/missing"\n');
    for (const mode of modes) {
      const run = await pod("prompt", "--now", NOW, ...mode);
      expect([run.code, run.stdout]).toEqual([1, ""]);
      expect(run.stderr).toMatch(
        /^pod: \.insomnia\/pod\.yaml:2:16: INCLUDE_FAILED: \[NOT_FOUND\] cannot load instruction: \$workspace\/missing: no file at /,
      );
      expect(run.stderr).toContain(join(box.ws, ".insomnia/prompts/missing.md"));
      expect(run.stderr).not.toMatch(STACK_LINE);
    }
  });

  test("user_layer_instruction_is_reported_at_the_absolute_user_file", async () => {
    const user = await box.write("insomnia/pod.yaml", "worker:\n  instruction: $user/gone\n", box.xdg);
    const run = await pod("prompt", "--now", NOW);
    expect(run.code).toBe(1);
    expect(run.stderr.startsWith(`pod: ${user}:2:16: INCLUDE_FAILED: [NOT_FOUND] `)).toBe(true);
    expect(run.stderr).toContain(join(box.xdg, "insomnia", "prompts", "gone.md"));
  });

  test("overlay_instruction_is_reported_at_the_overlay", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$foo/x"\n');
    for (const mode of modes) {
      const run = await pod("prompt", "--now", NOW, ...mode, "--overlay", 'worker.instruction = "$user/x.md"');
      expect([run.code, run.stdout]).toEqual([1, ""]);
      expect(run.stderr).toMatch(
        /^pod: --overlay:1:22: INCLUDE_FAILED: \[INVALID_REF\] cannot load instruction "\$user\/x\.md": .*drop the \.md/,
      );
    }
  });

  test("missing_include_keeps_its_own_position_and_shows_the_loader_code", async () => {
    await box.write(".insomnia/pod.yaml", 'worker:\n  instruction: "$workspace/main"\n');
    const main = await box.write(".insomnia/prompts/main.md", 'hi {{> "gone"}}\n');
    const run = await pod("prompt", "--now", NOW, "--json");
    expect([run.code, run.stdout]).toEqual([1, ""]);
    expect(
      run.stderr.startsWith(
        `pod: ${main}:1:4: INCLUDE_FAILED: [NOT_FOUND] cannot load include: $workspace/gone: no file at `,
      ),
    ).toBe(true);
  });
});

describe("pod prompt with a scope that cannot be resolved", () => {
  test("a_rule_whose_target_is_a_symlink_loop_is_reported_at_its_target_value", async () => {
    await symlink("loop", join(box.ws, "loop"));
    await box.write(
      ".insomnia/pod.yaml",
      "scope:\n  allow:\n    - target: .\n      permission: write\n    - target: loop/inner\n      permission: read\n",
    );
    const run = await pod("prompt", "--now", NOW);
    expect([run.code, run.stdout]).toEqual([1, ""]);
    expect(run.stderr).toMatch(
      /^pod: \.insomnia\/pod\.yaml:5:15: INVALID_RULE: scope\.allow\[1\]: target "loop\/inner" cannot be resolved: .*symlink/,
    );
    expect(run.stderr).not.toMatch(STACK_LINE);
    // Rules of every layer are numbered in one list: the overlay's first rule comes after the file's.
    await box.write(".insomnia/pod.yaml", "scope:\n  allow:\n    - target: .\n      permission: write\n");
    const overlay = await pod(
      "prompt",
      "--now",
      NOW,
      "--overlay",
      'scope.allow = [{target: "loop/x", permission: "read"}]',
    );
    expect(overlay.stderr).toMatch(
      /^pod: --overlay:1:25: INVALID_RULE: scope\.allow\[1\]: target "loop\/x" cannot be resolved/,
    );
  });
});

describe("pod prompt --explain and --json", () => {
  // Each run loads the 2.7 MB tokenizer, compiled afresh in each new sandbox: slow by design.
  vi.setConfig({ testTimeout: SLOW_TEST_TIMEOUT_MS });
  test("explain_maps_sources_sections_and_tokens", async () => {
    await goldenWorkspace();
    const prompt = (await pod("prompt", "--now", NOW, "--tool", "read_file", "--tool", "write_file")).stdout;
    const run = await pod("prompt", "--now", NOW, "--tool", "read_file", "--tool", "write_file", "--explain");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    const out = run.stdout;
    expect(out).toContain(`System prompt of a pod in ${box.ws}\n`);
    expect(out).toContain("  instruction  $workspace/main\n");
    expect(out).toContain(`  now          ${NOW}\n`);
    expect(out).toContain("  tools        read_file, write_file\n");
    expect(out).toMatch(/^ {2}section\s+bytes\s+tokens \(o200k_base\)$/m);

    const mainFile = join(box.ws, ".insomnia/prompts/main.md");
    const mainText = await readFile(mainFile, "utf8");
    const sha = createHash("sha256").update(mainText).digest("hex").slice(0, 12);
    expect(out).toMatch(
      new RegExp(`^  \\$workspace/main\\s+${Buffer.byteLength(mainText)}  ${sha}  ${mainFile}$`, "m"),
    );
    for (const ref of ["$workspace/rules", "$workspace/parts/intro", "$workspace/parts/detail", "$user/style"]) {
      expect(out).toMatch(new RegExp(`^  ${ref.replace("$", "\\$")}\\s+\\d+  [0-9a-f]{12}  /`, "m"));
    }
    expect(out).toMatch(new RegExp(`^  AGENTS\\.md\\s+20  -\\s+${join(box.ws, "AGENTS.md")}$`, "m"));
    expect(out).toMatch(new RegExp(`^  total\\s+${Buffer.byteLength(prompt)}\\s+${countTokens(prompt)}$`, "m"));
    expect(out).toMatch(/^ {2}working boundaries\s+\d+\s+\d+$/m);
    expect(out).toContain("Warnings: none\n");
  });

  test("json_has_a_stable_schema_and_the_exact_prompt", async () => {
    await goldenWorkspace();
    const prompt = (await pod("prompt", "--now", NOW, "--tool", "read_file", "--tool", "write_file")).stdout;
    const run = await pod("prompt", "--now", NOW, "--tool", "write_file", "--tool", "read_file", "--json");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    const json = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual([
      "cwd",
      "instruction",
      "manifestFiles",
      "workspace",
      "now",
      "tools",
      "mcpServers",
      "tokenizer",
      "sources",
      "agentsMd",
      "skills",
      "sections",
      "total",
      "warnings",
      "prompt",
    ]);
    expect(json.prompt).toBe(prompt);
    expect(json.cwd).toBe(box.ws);
    expect(json.instruction).toBe("$workspace/main");
    expect(json.manifestFiles).toEqual([join(box.ws, ".insomnia/pod.yaml")]);
    expect(json.workspace).toEqual({ root: box.ws, manifest: join(box.ws, ".insomnia/pod.yaml"), trusted: false });
    expect(json.now).toBe(NOW);
    expect(json.tools).toEqual(["read_file", "write_file"]);
    expect(json.tokenizer).toBe("o200k_base");
    const sources = json.sources as { ref: string; path: string; bytes: number; sha256: string }[];
    expect(sources.map((s) => s.ref)).toEqual([
      "$workspace/main",
      "$workspace/rules",
      "$workspace/parts/intro",
      "$workspace/parts/detail",
      "$user/style",
    ]);
    expect(Object.keys(sources[0]!)).toEqual(["ref", "path", "bytes", "sha256"]);
    expect(sources[4]).toEqual({
      ref: "$user/style",
      path: join(box.xdg, "insomnia/prompts/style.md"),
      bytes: 17,
      sha256: createHash("sha256").update("Style: be brief.\n").digest("hex"),
    });
    expect(json.agentsMd).toEqual({ path: join(box.ws, "AGENTS.md"), bytes: 20, totalBytes: 20, truncated: false });
    const sections = json.sections as { name: string; bytes: number; tokens: number }[];
    expect(sections.map((s) => s.name)).toEqual(["instruction", "workingBoundaries", "agentsMd"]);
    expect(sections[2]).toEqual({ name: "agentsMd", bytes: 20, tokens: countTokens("# Agents\n\nUse pnpm.\n") });
    expect(json.total).toEqual({ bytes: Buffer.byteLength(prompt), tokens: countTokens(prompt) });
    expect(json.warnings).toEqual([]);
  });

  test("json_and_explain_list_agents_md_warnings", async () => {
    await box.write(".insomnia/pod.yaml", "scope:\n  allow:\n    - target: sub\n      permission: write\n");
    await box.write("sub/keep", "");
    await box.write("outside/AGENTS.md", "TOPSECRET-7f3a\n", box.home);
    await symlink(join(box.home, "outside/AGENTS.md"), join(box.ws, "AGENTS.md"));
    const run = await pod("prompt", "--now", NOW, "--json");
    expect(run.code).toBe(0);
    const json = JSON.parse(run.stdout) as {
      agentsMd: unknown;
      warnings: { code: string; file: string | null }[];
      prompt: string;
    };
    expect(json.agentsMd).toBeNull();
    expect(json.warnings.map((w) => w.code)).toEqual(["AGENTS_MD_OUTSIDE_SCOPE"]);
    expect(json.prompt).not.toContain("TOPSECRET-7f3a");
    expect(run.stderr).toMatch(/^pod: .*AGENTS\.md: warning: AGENTS_MD_OUTSIDE_SCOPE: /);
    const explained = await pod("prompt", "--now", NOW, "--explain");
    expect(explained.stdout).toMatch(/^Warnings\n {2}AGENTS_MD_OUTSIDE_SCOPE: /m);
    expect(explained.stderr).toMatch(/^pod: .*AGENTS\.md: warning: AGENTS_MD_OUTSIDE_SCOPE: /);
  });

  test("tokenizer_counts_special_token_text_as_plain_text", async () => {
    await box.write("AGENTS.md", "Never print <|endoftext|> literally.\n");
    const run = await pod("prompt", "--now", NOW, "--json");
    expect([run.code, run.stderr]).toEqual([0, ""]);
    const json = JSON.parse(run.stdout) as { total: { tokens: number }; prompt: string };
    expect(json.total.tokens).toBe(countTokens(json.prompt, { disallowedSpecial: new Set() }));
  });
});

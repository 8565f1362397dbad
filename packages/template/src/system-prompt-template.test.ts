import { PromptLoader, PromptLoaderError } from "@insomnia/prompt-loader";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makePromptDirs, sampleContext, type PromptDirs } from "./__fixtures__/prompt-dirs.ts";
import {
  clearTemplateCache,
  type RenderContext,
  SystemPromptError,
  SystemPromptTemplate,
  templateCacheStats,
  type ParseOptions,
} from "./index.ts";

let p: PromptDirs;
beforeEach(() => {
  p = makePromptDirs();
});
afterEach(() => {
  p.cleanup();
});

const TRAILER = "---\n## Working boundaries\n\nReadable:\n  - /repo\n  - /docs [non-recursive]\nWritable:\n  - /repo\n";

async function parseError(ref: string, options?: ParseOptions): Promise<SystemPromptError> {
  try {
    await SystemPromptTemplate.parse(ref, p.loader, options);
  } catch (error) {
    if (SystemPromptError.is(error)) return error;
    throw error;
  }
  throw new Error(`parsing ${ref} did not fail`);
}

function renderError(
  template: SystemPromptTemplate,
  ...args: Parameters<SystemPromptTemplate["render"]>
): SystemPromptError {
  try {
    template.render(...args);
  } catch (error) {
    if (SystemPromptError.is(error)) return error;
    throw error;
  }
  throw new Error("render did not fail");
}

function where(error: SystemPromptError) {
  return {
    phase: error.phase,
    code: error.code,
    ref: error.ref,
    file: error.file,
    line: error.line,
    column: error.column,
  };
}

describe("SystemPromptTemplate: references and includes", () => {
  it("instruction_default_resolves_to_insomnia_default", async () => {
    const file = p.write("$insomnia/default", "You are a careful agent working in {{cwd}}.\n");
    const template = await SystemPromptTemplate.parse("$insomnia/default", p.loader);
    expect(template.instruction).toBe("$insomnia/default");
    expect(template.sources.map((s) => [s.ref, s.file])).toEqual([["$insomnia/default", file]]);
    expect(template.render(sampleContext())).toBe(`You are a careful agent working in /repo.\n\n${TRAILER}`);
  });

  it("the_shipped_default_instruction_parses_and_renders", async () => {
    const template = await SystemPromptTemplate.parse("$insomnia/default", new PromptLoader());
    const prompt = template.render(sampleContext());
    expect([
      template.sources.length,
      template.sources[0]?.ref,
      prompt.includes("{{"),
      prompt.endsWith(TRAILER),
    ]).toEqual([1, "$insomnia/default", false, true]);
  });

  it("instruction_prefix_addressing_insomnia", async () => {
    p.write("$insomnia/common/header", "builtin header");
    p.write("$user/common/header", "user header");
    const template = await SystemPromptTemplate.parse("$insomnia/common/header", p.loader);
    expect([template.sources[0]?.file, template.renderInstruction(sampleContext())]).toEqual([
      p.fileOf("$insomnia/common/header"),
      "builtin header",
    ]);
  });

  it("instruction_prefix_addressing_user", async () => {
    p.write("$insomnia/style", "builtin style");
    p.write("$user/style", "user style");
    const template = await SystemPromptTemplate.parse("$user/style", p.loader);
    expect([template.instruction, template.sources[0]?.file, template.renderInstruction(sampleContext())]).toEqual([
      "$user/style",
      p.fileOf("$user/style"),
      "user style",
    ]);
  });

  it("instruction_prefix_addressing_workspace", async () => {
    p.write("$user/team/review", "user review");
    p.write("$workspace/team/review", "workspace review");
    const template = await SystemPromptTemplate.parse("$workspace/team/review", p.loader);
    expect([template.instruction, template.sources[0]?.file, template.renderInstruction(sampleContext())]).toEqual([
      "$workspace/team/review",
      p.fileOf("$workspace/team/review"),
      "workspace review",
    ]);
  });

  it("include_unqualified_resolves_relative_to_current_prefix", async () => {
    p.write("$insomnia/default", "D[{{> sub}}]");
    p.write("$insomnia/sub", "S[{{> common/header}}]");
    p.write("$insomnia/common/header", "H[{{> nested/foo}}]");
    p.write("$insomnia/common/nested/foo", "F");
    // Same names under $user must not be picked up.
    p.write("$user/sub", "wrong");
    p.write("$insomnia/nested/foo", "wrong");
    const template = await SystemPromptTemplate.parse("$insomnia/default", p.loader);
    expect(template.sources.map((s) => s.ref)).toEqual([
      "$insomnia/default",
      "$insomnia/sub",
      "$insomnia/common/header",
      "$insomnia/common/nested/foo",
    ]);
    expect(template.renderInstruction(sampleContext())).toBe("D[S[H[F]]]");
  });

  it("include_explicit_prefix_overrides_relative", async () => {
    p.write("$user/custom", 'U[{{> "$insomnia/default"}}|{{> $workspace/default}}|{{> default}}]');
    p.write("$insomnia/default", "builtin");
    p.write("$workspace/default", "workspace");
    p.write("$user/default", "user");
    const template = await SystemPromptTemplate.parse("$user/custom", p.loader);
    expect(template.renderInstruction(sampleContext())).toBe("U[builtin|workspace|user]");
    expect(template.sources.map((s) => s.ref)).toEqual([
      "$user/custom",
      "$insomnia/default",
      "$workspace/default",
      "$user/default",
    ]);
  });

  it("prefix_with_missing_file_is_hard_error", async () => {
    p.write("$workspace/main", 'line one\n  {{> "$user/style"}}\n');
    p.write("$workspace/style", "exists under $workspace only");
    const error = await parseError("$workspace/main");
    expect(where(error)).toEqual({
      phase: "parse",
      code: "INCLUDE_FAILED",
      ref: "$workspace/main",
      file: p.fileOf("$workspace/main"),
      line: 2,
      column: 3,
    });
    expect(PromptLoaderError.is(error.cause) && [error.cause.code, error.cause.file]).toEqual([
      "NOT_FOUND",
      p.fileOf("$user/style"),
    ]);
    expect(error.message).toContain(p.fileOf("$user/style"));

    const root = await parseError("$user/nothing");
    expect(where(root)).toEqual({
      phase: "parse",
      code: "INCLUDE_FAILED",
      ref: "$user/nothing",
      file: undefined,
      line: undefined,
      column: undefined,
    });
    expect(PromptLoaderError.is(root.cause) && root.cause.code).toBe("NOT_FOUND");
  });

  it("rejects_an_invalid_instruction_reference", async () => {
    for (const ref of ["default", "$foo/x", "$user/x.md", "$user/../x"]) {
      const error = await parseError(ref);
      expect([error.code, error.ref, PromptLoaderError.is(error.cause)]).toEqual(["INCLUDE_FAILED", ref, true]);
    }
  });

  it("rejects_an_invalid_include_name_at_the_include", async () => {
    p.write("$workspace/main", "x {{> common/header.md}}");
    const error = await parseError("$workspace/main");
    expect(where(error)).toMatchObject({ code: "INCLUDE_FAILED", ref: "$workspace/main", line: 1, column: 3 });
    expect(PromptLoaderError.is(error.cause) && error.cause.code).toBe("INVALID_REF");
  });

  it("lists_sources_root_first_depth_first_each_once", async () => {
    p.write("$workspace/a", "{{> b}}{{> c}}{{> b}}");
    p.write("$workspace/b", "{{> d}}");
    p.write("$workspace/c", "{{> d}}{{> e}}");
    p.write("$workspace/d", "d");
    p.write("$workspace/e", "e");
    const template = await SystemPromptTemplate.parse("$workspace/a", p.loader);
    expect(template.sources.map((s) => s.ref)).toEqual([
      "$workspace/a",
      "$workspace/b",
      "$workspace/d",
      "$workspace/c",
      "$workspace/e",
    ]);
    expect(template.sources.every((s) => /^[0-9a-f]{64}$/.test(s.sha256))).toBe(true);
    expect(template.renderInstruction(sampleContext())).toBe("dded");
  });

  it("renders_the_done_when_workspace_exactly", async () => {
    p.write(
      "$workspace/a",
      '# Agent\n\nYou work in {{cwd}} on {{date}} at {{time}} ({{datetime}}).\n\n{{> b}}\n\nTools: {{join tools ", "}}\n',
    );
    p.write(
      "$workspace/b",
      '## From b\n  {{> "$user/c"}}\n{{#each scope.writable}}\n- may write {{this}} (cwd {{cwd}})\n{{/each}}\n',
    );
    p.write("$user/c", "From c, first tool: {{#each tools}}{{#if @first}}{{this}}{{/if}}{{/each}}\nsecond line of c\n");
    const template = await SystemPromptTemplate.parse("$workspace/a", p.loader);
    expect(template.sources.map((s) => [s.ref, s.file])).toEqual([
      ["$workspace/a", p.fileOf("$workspace/a")],
      ["$workspace/b", p.fileOf("$workspace/b")],
      ["$user/c", p.fileOf("$user/c")],
    ]);
    expect(template.render(sampleContext({ agentsMd: "Run `pnpm test`.\n" }))).toBe(
      "# Agent\n" +
        "\n" +
        "You work in /repo on 2026-11-30 at 16:37:00 (2026-11-30T16:37:00Z).\n" +
        "\n" +
        "## From b\n" +
        "  From c, first tool: read_file\n" +
        "  second line of c\n" +
        "- may write /repo (cwd /repo)\n" +
        "\n" +
        "Tools: read_file, write_file\n" +
        "\n" +
        "---\n" +
        "## Working boundaries\n" +
        "\n" +
        "Readable:\n" +
        "  - /repo\n" +
        "  - /docs [non-recursive]\n" +
        "Writable:\n" +
        "  - /repo\n" +
        "\n" +
        "---\n" +
        "## Project instructions (AGENTS.md)\n" +
        "\n" +
        "Run `pnpm test`.\n",
    );
  });
});

describe("SystemPromptTemplate: trailing section", () => {
  it("trailing_section_always_contains_scope_summary", async () => {
    p.write("$workspace/empty", "");
    p.write("$workspace/mentions", "Never print {{!-- scope --}}anything about scope.");
    const empty = await SystemPromptTemplate.parse("$workspace/empty", p.loader);
    const mentions = await SystemPromptTemplate.parse("$workspace/mentions", p.loader);
    expect(empty.render(sampleContext())).toBe(TRAILER);
    expect(mentions.render(sampleContext())).toBe(`Never print anything about scope.\n\n${TRAILER}`);
    const summary = "Readable:\n  - /x\n";
    expect(empty.render(sampleContext({ scope: { readable: ["/x"], writable: [], summary } }))).toBe(
      "---\n## Working boundaries\n\nReadable:\n  - /x\n",
    );
  });

  it("trailing_section_contains_agents_md_when_present", async () => {
    p.write("$workspace/main", "Body\n\n\n");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(template.render(sampleContext({ agentsMd: "# Project\n{{#each}} {{cwd}}" }))).toBe(
      `Body\n\n${TRAILER}\n---\n## Project instructions (AGENTS.md)\n\n# Project\n{{#each}} {{cwd}}\n`,
    );
  });

  it("trailing_section_omits_agents_md_when_absent", async () => {
    p.write("$workspace/main", "Body");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    const prompt = template.render(sampleContext());
    expect(prompt).toBe(`Body\n\n${TRAILER}`);
    expect(prompt.includes("AGENTS.md")).toBe(false);
  });
});

describe("SystemPromptTemplate: rendering", () => {
  it("never_interprets_values_as_template_syntax", async () => {
    p.write("$workspace/main", "{{cwd}}|{{{cwd}}}|{{join tools}}|{{#each tools}}{{this}}{{/each}}");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(template.renderInstruction(sampleContext({ cwd: "/x/{{date}}/<&\"'>", tools: ["{{#each}}"] }))).toBe(
      "/x/{{date}}/<&\"'>|/x/{{date}}/<&\"'>|{{#each}}|{{#each}}",
    );
    fc.assert(
      fc.property(fc.string(), fc.string(), (cwd, agentsMd) => {
        const prompt = template.render(sampleContext({ cwd, tools: [], agentsMd }));
        expect(prompt.startsWith(`${cwd}|${cwd}||`.replace(/\n+$/, ""))).toBe(true);
        expect(prompt.endsWith(`\n\n${agentsMd}${agentsMd === "" || agentsMd.endsWith("\n") ? "" : "\n"}`)).toBe(true);
      }),
    );
  });

  it("root_variables_inside_each_and_with_print_the_root_values", async () => {
    p.write(
      "$workspace/main",
      "{{#each tools}}[{{@index}}:{{this}} in {{cwd}} {{scope.summary.length}}]{{/each}}".replace(
        " {{scope.summary.length}}",
        "",
      ) +
        "|{{#with scope}}{{join writable}} {{cwd}} {{#each readable as |path i|}}{{i}}={{path}}@{{datetime}};{{/each}}{{/with}}" +
        '|{{#each scope.writable}}{{#if tools}}{{join tools "/"}}{{/if}}{{/each}}' +
        "|{{#each tools as |tool|}}{{#each scope.writable}}{{tool}}>{{this}}{{#if @last}}.{{/if}}{{/each}}{{/each}}",
    );
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(template.renderInstruction(sampleContext())).toBe(
      "[0:read_file in /repo][1:write_file in /repo]" +
        "|/repo /repo 0=/repo@2026-11-30T16:37:00Z;1=/docs@2026-11-30T16:37:00Z;" +
        "|read_file/write_file" +
        "|read_file>/repo.write_file>/repo.",
    );
  });

  it("supports_else_if_chains_unless_and_empty_lists", async () => {
    p.write(
      "$workspace/main",
      "{{#if scope.writable}}rw{{else if scope.readable}}ro{{else}}none{{/if}} {{#unless tools}}no tools{{/unless}} " +
        '{{#each tools}}{{this}}{{else}}(none){{/each}} [{{join tools}}] [{{join scope.readable " + "}}]',
    );
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(
      template.renderInstruction(
        sampleContext({ tools: [], scope: { readable: ["/a", "/b"], writable: [], summary: "" } }),
      ),
    ).toBe("ro no tools (none) [] [/a + /b]");
    expect(template.renderInstruction(sampleContext())).toBe(
      "rw  read_filewrite_file [read_file, write_file] [/repo + /docs]",
    );
  });

  it("indents_every_line_of_a_standalone_include", async () => {
    p.write("$workspace/main", "Rules:\n  {{> list}}\nEnd {{> list}}|\n");
    p.write("$workspace/list", "- one\n\n- two\n");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(template.renderInstruction(sampleContext())).toBe("Rules:\n  - one\n  \n  - two\nEnd - one\n\n- two\n|\n");
  });

  it("a_parsed_template_renders_many_times_without_shared_state", async () => {
    p.write("$workspace/main", "{{cwd}}: {{#each tools}}{{> item}}{{/each}}");
    p.write("$workspace/item", "<{{datetime}}>");
    const template = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    const first = template.renderInstruction(sampleContext({ cwd: "/a", tools: ["x"] }));
    const second = template.renderInstruction(sampleContext({ cwd: "/b", tools: ["x", "y"], now: new Date(0) }));
    expect([first, second, template.renderInstruction(sampleContext({ cwd: "/a", tools: ["x"] }))]).toEqual([
      "/a: <2026-11-30T16:37:00Z>",
      "/b: <1970-01-01T00:00:00Z><1970-01-01T00:00:00Z>",
      first,
    ]);
  });

  it("a_second_parse_of_the_same_files_hits_the_cache", async () => {
    p.write("$workspace/main", "{{> part}} {{cwd}}");
    p.write("$workspace/part", "part");
    clearTemplateCache();
    const first = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(templateCacheStats()).toMatchObject({ hits: 0, misses: 2, size: 2 });
    const second = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(templateCacheStats()).toMatchObject({ hits: 2, misses: 2, size: 2 });
    expect(second.renderInstruction(sampleContext())).toBe(first.renderInstruction(sampleContext()));
    p.write("$workspace/part", "changed");
    const third = await SystemPromptTemplate.parse("$workspace/main", p.loader);
    expect(templateCacheStats()).toMatchObject({ hits: 3, misses: 3, size: 3 });
    expect(third.renderInstruction(sampleContext())).toBe("changed /repo");
    expect(first.renderInstruction(sampleContext())).toBe("part /repo");
    clearTemplateCache();
    expect(templateCacheStats()).toMatchObject({ hits: 0, misses: 0, size: 0 });
  });

  it("works_with_a_loader_built_by_for_pod", async () => {
    const cwd = p.dirs.$workspace.replace(/\/\.insomnia\/prompts$/, "");
    p.write("$workspace/main", 'pod {{> "$user/x"}}');
    p.write("$user/x", "user");
    const loader = PromptLoader.forPod({ cwd, env: { XDG_CONFIG_HOME: p.root, HOME: p.root } });
    // forPod's $user root is $XDG_CONFIG_HOME/insomnia/prompts; put the file there too.
    const { mkdirSync, writeFileSync } = await import("node:fs");
    mkdirSync(`${p.root}/insomnia/prompts`, { recursive: true });
    writeFileSync(`${p.root}/insomnia/prompts/x.md`, "xdg user");
    const template = await SystemPromptTemplate.parse("$workspace/main", loader);
    expect(template.renderInstruction(sampleContext())).toBe("pod xdg user");
  });
});

describe("SystemPromptTemplate: bad input", () => {
  it("template_parse_rejects_invalid_syntax", async () => {
    p.write("$workspace/unclosed", "Intro\n\n  {{#if tools}}\nUse them.\n");
    expect(where(await parseError("$workspace/unclosed"))).toEqual({
      phase: "parse",
      code: "SYNTAX",
      ref: "$workspace/unclosed",
      file: p.fileOf("$workspace/unclosed"),
      line: 3,
      column: 3,
    });
    p.write("$workspace/mismatch", "{{#if tools}}\n  x {{/each}}\n");
    const mismatch = await parseError("$workspace/mismatch");
    expect(where(mismatch)).toMatchObject({ code: "SYNTAX", ref: "$workspace/mismatch", line: 2, column: 5 });
    expect(mismatch.message).toBe(
      "$workspace/mismatch:2:5: syntax error: {{/each}} does not close {{#if}} opened at 1:1; close it with {{/if}}",
    );
  });

  it("an_instruction_that_cannot_be_loaded_is_reported_where_its_reference_was_written", async () => {
    const instructionAt = { file: ".insomnia/pod.yaml", line: 2, column: 16 };
    const missing = await parseError("$workspace/missing", { instructionAt });
    expect(where(missing)).toEqual({ phase: "parse", code: "INCLUDE_FAILED", ref: undefined, ...instructionAt });
    expect(PromptLoaderError.is(missing.cause) && missing.cause.code).toBe("NOT_FOUND");
    const invalid = await parseError("$foo/x", { instructionAt });
    expect(where(invalid)).toMatchObject({ code: "INCLUDE_FAILED", ...instructionAt });
    expect(PromptLoaderError.is(invalid.cause) && invalid.cause.code).toBe("UNKNOWN_PREFIX");
    // Without it, the reference is the only place there is.
    expect(where(await parseError("$workspace/missing"))).toMatchObject({ ref: "$workspace/missing", line: undefined });
    // A problem inside a file that was loaded is at its own line, wherever the reference was written.
    p.write("$workspace/bad", "{{#if tools}}");
    expect(where(await parseError("$workspace/bad", { instructionAt }))).toMatchObject({
      code: "SYNTAX",
      ref: "$workspace/bad",
      line: 1,
    });
  });

  it("reports_errors_three_includes_deep_in_the_included_file", async () => {
    p.write("$workspace/root", "{{> one}}");
    p.write("$workspace/one", "1\n{{> two}}");
    p.write("$workspace/two", '2\n\n{{> "$user/three"}}');
    p.write("$user/three", "ok {{cwd}}\n{{#each tools}}\n  {{#if @first}}{{tool}}{{/if}}\n{{/each}}");
    const error = await parseError("$workspace/root");
    expect(where(error)).toEqual({
      phase: "parse",
      code: "UNKNOWN_VARIABLE",
      ref: "$user/three",
      file: p.fileOf("$user/three"),
      line: 3,
      column: 19,
    });
    expect(error.chain).toEqual(["$workspace/root", "$workspace/one", "$workspace/two", "$user/three"]);
    expect(error.message).toContain("included via $workspace/root -> $workspace/one -> $workspace/two -> $user/three");

    p.write("$user/three", "{{#if x}}");
    expect(where(await parseError("$workspace/root"))).toMatchObject({
      code: "SYNTAX",
      ref: "$user/three",
      line: 1,
      column: 1,
    });
    p.write("$user/three", "{{> missing}}");
    const missing = await parseError("$workspace/root");
    expect(where(missing)).toMatchObject({ code: "INCLUDE_FAILED", ref: "$user/three", line: 1, column: 1 });
    expect(missing.chain).toEqual(["$workspace/root", "$workspace/one", "$workspace/two", "$user/three"]);
  });

  it("lists_every_problem_of_a_file_and_every_include_that_fails_to_load", async () => {
    p.write("$workspace/main", '{{cwdd}}\n{{> gone}}\n{{> part}}\n{{tols}}\n{{> "$user/gone"}}');
    p.write("$workspace/part", "fine");
    // The file's own problems and its includes that fail to load, in one run, in document
    // order (the missing includes used to show only once the variables were fixed: issue 11).
    const checked = await parseError("$workspace/main");
    const inMain = { phase: "parse", ref: "$workspace/main", file: p.fileOf("$workspace/main") };
    expect(checked.problems.map(where)).toEqual([
      { ...inMain, code: "UNKNOWN_VARIABLE", line: 1, column: 3 },
      { ...inMain, code: "INCLUDE_FAILED", line: 2, column: 1 },
      { ...inMain, code: "UNKNOWN_VARIABLE", line: 4, column: 3 },
      { ...inMain, code: "INCLUDE_FAILED", line: 5, column: 1 },
    ]);
    expect(checked.problems[0]).toBe(checked);
    expect(checked.problems.map((e) => PromptLoaderError.is(e.cause) && e.cause.code)).toEqual([
      false,
      "NOT_FOUND",
      false,
      "NOT_FOUND",
    ]);

    p.write("$workspace/main", '{{> gone}}\n{{> part}}\n  {{> "$user/gone"}}\n{{> gone}}');
    p.write("$workspace/part", "{{cwd}} {{oops}}");
    p.write("$workspace/part", "fine");
    const loading = await parseError("$workspace/main");
    expect(loading.problems.map((e) => [e.code, e.ref, e.line, e.column])).toEqual([
      ["INCLUDE_FAILED", "$workspace/main", 1, 1],
      ["INCLUDE_FAILED", "$workspace/main", 3, 3],
      ["INCLUDE_FAILED", "$workspace/main", 4, 1],
    ]);
    expect(loading.problems[0]).toBe(loading);
    expect(loading.problems.map((e) => PromptLoaderError.is(e.cause) && e.cause.code)).toEqual([
      "NOT_FOUND",
      "NOT_FOUND",
      "NOT_FOUND",
    ]);

    // A problem inside an included file ends the walk: what failed to load before it is kept.
    p.write("$workspace/part", "{{cwd}} {{oops}} {{tols}}");
    const nested = await parseError("$workspace/main");
    expect(nested.problems.map((e) => [e.code, e.ref, e.line, e.column])).toEqual([
      ["INCLUDE_FAILED", "$workspace/main", 1, 1],
      ["UNKNOWN_VARIABLE", "$workspace/part", 1, 11],
      ["UNKNOWN_VARIABLE", "$workspace/part", 1, 20],
    ]);
  });

  it("a_single_problem_lists_only_itself", async () => {
    p.write("$workspace/main", "{{#if x}}");
    const error = await parseError("$workspace/main");
    expect([error.code, error.problems.length, error.problems[0] === error]).toEqual(["SYNTAX", 1, true]);
  });

  it("detects_include_cycles_and_shows_the_whole_chain", async () => {
    p.write("$workspace/root", "{{> a}}");
    p.write("$workspace/a", "a\n{{> b}}");
    p.write("$workspace/b", "b\n  x {{> a}}");
    const error = await parseError("$workspace/root");
    expect(where(error)).toEqual({
      phase: "parse",
      code: "CYCLE",
      ref: "$workspace/b",
      file: p.fileOf("$workspace/b"),
      line: 2,
      column: 5,
    });
    expect(error.message).toBe(
      "$workspace/b:2:5: include cycle: $workspace/root -> $workspace/a -> $workspace/b -> $workspace/a; remove one of these includes",
    );
    p.write("$workspace/self", "{{> self}}");
    expect(where(await parseError("$workspace/self"))).toMatchObject({
      code: "CYCLE",
      ref: "$workspace/self",
      line: 1,
      column: 1,
    });
  });

  it("caps_include_depth", async () => {
    for (let i = 0; i < 20; i++) p.write(`$workspace/f${i}`, `level ${i}\n{{> f${i + 1}}}`);
    p.write("$workspace/f20", "end");
    const error = await parseError("$workspace/f0");
    expect(where(error)).toEqual({
      phase: "parse",
      code: "TOO_DEEP",
      ref: "$workspace/f16",
      file: p.fileOf("$workspace/f16"),
      line: 2,
      column: 1,
    });
    expect(error.chain?.length).toBe(17);
    const ok = await SystemPromptTemplate.parse("$workspace/f0", p.loader, { maxIncludeDepth: 20 });
    expect(ok.sources.length).toBe(21);
    expect(where(await parseError("$workspace/f0", { maxIncludeDepth: 2 }))).toMatchObject({
      code: "TOO_DEEP",
      ref: "$workspace/f2",
    });
  });

  it("caps_include_depth_along_every_path_to_a_shared_file", async () => {
    p.write("$workspace/root", "{{> a}}\n{{> x1}}");
    p.write("$workspace/x1", "{{> x2}}");
    p.write("$workspace/x2", "x2 {{> a}}");
    p.write("$workspace/a", "{{> b}}");
    p.write("$workspace/b", "{{> c}}");
    p.write("$workspace/c", "c");
    const error = await parseError("$workspace/root", { maxIncludeDepth: 3 });
    expect(where(error)).toEqual({
      phase: "parse",
      code: "TOO_DEEP",
      ref: "$workspace/a",
      file: p.fileOf("$workspace/a"),
      line: 1,
      column: 1,
    });
    expect(error.chain).toEqual(["$workspace/root", "$workspace/x1", "$workspace/x2", "$workspace/a"]);
    expect(
      (await SystemPromptTemplate.parse("$workspace/root", p.loader, { maxIncludeDepth: 5 })).renderInstruction(
        sampleContext(),
      ),
    ).toBe("cx2 c"); // a standalone include line gives up its own newline
  });

  it("caps_distinct_includes", async () => {
    p.write("$workspace/root", Array.from({ length: 5 }, (_, i) => `{{> f${i}}}`).join("\n"));
    for (let i = 0; i < 5; i++) p.write(`$workspace/f${i}`, String(i));
    const error = await parseError("$workspace/root", { maxIncludes: 4 });
    expect(where(error)).toMatchObject({ code: "TOO_MANY_INCLUDES", ref: "$workspace/root", line: 4, column: 1 });
  });

  it("rejects_exponential_fan_out_at_parse_time", async () => {
    const fanOut = (name: (level: number) => string, levels: number, copies: number) => {
      for (let level = 0; level < levels; level++) {
        p.write(
          name(level),
          `L${level}\n${Array.from({ length: copies }, () => `{{> ${name(level + 1).split("/")[1]}}}`).join("\n")}\n`,
        );
      }
      p.write(name(levels), "leaf {{cwd}}");
    };
    fanOut((l) => `$workspace/x${l}`, 8, 10);
    const error = await parseError("$workspace/x0");
    // x4 expands to about 43 000 statements, x3 to ten of those: its third include crosses 100 000.
    expect(where(error)).toEqual({
      phase: "parse",
      code: "EXPANSION_TOO_LARGE",
      ref: "$workspace/x3",
      file: p.fileOf("$workspace/x3"),
      line: 4,
      column: 1,
    });
    expect(error.chain).toEqual(["$workspace/x0", "$workspace/x1", "$workspace/x2", "$workspace/x3"]);
    expect(error.message).toContain("over the limit of 100000");

    // The same shape, over a limit the caller chose.
    fanOut((l) => `$workspace/y${l}`, 3, 2);
    // y1 alone expands to 23 statements, so the error points into it.
    expect(where(await parseError("$workspace/y0", { maxExpandedNodes: 20 }))).toMatchObject({
      code: "EXPANSION_TOO_LARGE",
      ref: "$workspace/y1",
      line: 3,
    });
    expect((await SystemPromptTemplate.parse("$workspace/y0", p.loader)).renderInstruction(sampleContext())).toContain(
      "leaf /repo",
    );
  });

  it("the_per_file_statement_cap_applies_before_a_syntax_error_is_located", async () => {
    // Many tags and an unclosed block at the end: the whole file was parsed, and the syntax
    // error located by lexing and re-parsing it, before the cap was looked at (issue 19).
    p.write("$workspace/many", `${"{{cwd}}".repeat(20_000)}{{#if}}`);
    const error = await parseError("$workspace/many");
    expect(where(error)).toEqual({
      phase: "parse",
      code: "EXPANSION_TOO_LARGE",
      ref: "$workspace/many",
      file: p.fileOf("$workspace/many"),
      line: 1,
      column: 1,
    });
    expect(error.detail).toContain("more than 10000 statements");
    // Under the cap the syntax error is still located. Locating it parses the whole file
    // (and again for Handlebars' own message and the failing token), so this file is a
    // tenth of the one above: the cap, not the file's size, is what the test is about.
    p.write("$workspace/fewer", `${"{{cwd}}".repeat(2_000)}{{#if}}`);
    const located = await parseError("$workspace/fewer");
    expect([located.code, located.line, located.column]).toEqual(["SYNTAX", 1, 14_001]);
  });

  it("stops_runtime_fan_out_with_the_step_budget", async () => {
    for (let level = 0; level < 8; level++) {
      p.write(`$workspace/z${level}`, Array.from({ length: 10 }, () => `{{> z${level + 1}}}`).join(""));
    }
    p.write("$workspace/z8", "leaf");
    const template = await SystemPromptTemplate.parse("$workspace/z0", p.loader, {
      maxExpandedNodes: Number.POSITIVE_INFINITY,
    });
    const error = renderError(template, sampleContext());
    expect(where(error)).toMatchObject({ phase: "render", code: "RENDER_BUDGET_EXCEEDED", line: 1 });
    expect(error.ref).toMatch(/^\$workspace\/z[0-7]$/);
    // Each "{{> zN}}" is 8 characters: the column is that of one of the ten includes.
    expect(((error.column ?? 0) - 1) % 8).toBe(0);
    expect(error.chain?.[0]).toBe("$workspace/z0");
    expect(error.chain?.at(-1)).toBe(error.ref);
  });

  it("stops_huge_loops_with_the_step_budget", async () => {
    p.write(
      "$workspace/loops",
      "Loops:\n{{#each tools}}\n{{#each tools}}\n{{#each tools}}\n{{#each tools}}\n{{#each tools}}\n  {{#each tools}}.{{/each}}\n{{/each}}\n{{/each}}\n{{/each}}\n{{/each}}\n{{/each}}\n",
    );
    const template = await SystemPromptTemplate.parse("$workspace/loops", p.loader);
    const tools = Array.from({ length: 100 }, (_, i) => `tool_${String(i).padStart(3, "0")}`);
    const error = renderError(template, sampleContext({ tools }));
    expect(where(error)).toEqual({
      phase: "render",
      code: "RENDER_BUDGET_EXCEEDED",
      ref: "$workspace/loops",
      file: p.fileOf("$workspace/loops"),
      line: 7,
      column: 3,
    });
    expect(renderError(template, sampleContext({ tools: ["a", "b", "c"] }), { maxSteps: 10 }).code).toBe(
      "RENDER_BUDGET_EXCEEDED",
    );
    expect(template.renderInstruction(sampleContext({ tools: ["a"] }))).toBe("Loops:\n  .\n");
    expect(template.renderInstruction(sampleContext({ tools: ["a", "b"] }))).toBe(`Loops:\n${"  ..\n".repeat(32)}`);
  });

  it("stops_output_over_the_cap", async () => {
    p.write("$workspace/big", "Head\n{{> part}}\n");
    p.write("$workspace/part", "x\n   {{#each tools}}{{scope.summary}}{{/each}}\n");
    const template = await SystemPromptTemplate.parse("$workspace/big", p.loader);
    const summary = "s".repeat(1024);
    const tools = Array.from({ length: 2048 }, (_, i) => `t${i}`);
    const error = renderError(template, sampleContext({ tools, scope: { readable: [], writable: [], summary } }));
    expect(where(error)).toEqual({
      phase: "render",
      code: "OUTPUT_TOO_LARGE",
      ref: "$workspace/part",
      file: p.fileOf("$workspace/part"),
      line: 2,
      column: 4,
    });
    expect(error.chain).toEqual(["$workspace/big", "$workspace/part"]);
    expect(error.message).toContain("larger than 1048576 bytes");
    // Output is counted as it is produced: "Head\n" and part's "x\n   " cross 8 bytes before
    // the loop runs, so the include that brought that text in is where it crossed.
    const small = renderError(template, sampleContext(), { maxOutputBytes: 8 });
    expect(where(small)).toMatchObject({ code: "OUTPUT_TOO_LARGE", ref: "$workspace/big", line: 2, column: 1 });
    const loop = renderError(template, sampleContext(), { maxOutputBytes: 11 });
    expect(where(loop)).toMatchObject({ code: "OUTPUT_TOO_LARGE", ref: "$workspace/part", line: 2, column: 4 });
    p.write("$workspace/static", "0123456789");
    const flat = await SystemPromptTemplate.parse("$workspace/static", p.loader);
    expect(where(renderError(flat, sampleContext(), { maxOutputBytes: 9 }))).toMatchObject({
      code: "OUTPUT_TOO_LARGE",
      ref: "$workspace/static",
      line: undefined,
    });
    expect(flat.renderInstruction(sampleContext(), { maxOutputBytes: 10 })).toBe("0123456789");
    expect(
      template.renderInstruction(sampleContext({ tools: ["a"], scope: { readable: [], writable: [], summary: "S" } }), {
        maxOutputBytes: 12,
      }),
    ).toBe("Head\nx\n   S\n");
  });

  it("output_is_counted_as_it_is_produced_so_one_body_cannot_grow_past_the_cap", async () => {
    // One body of 10,000 values used to be counted only when it was whole: 7,537 paths
    // joined 10,000 times built gigabytes and failed with RENDER_FAILED ("Invalid string
    // length"), a 64 KB summary 10,000 times too, 200 tools 10,000 times was counted at
    // 20 MB (issue 19). Now each render stops one value past the cap.
    const cap = 1024 * 1024;
    const readable = Array.from({ length: 7537 }, (_, i) => `/srv/project/module-${String(i).padStart(5, "0")}`);
    const tools = Array.from({ length: 200 }, (_, i) => `tool_${String(i).padStart(3, "0")}`);
    const summary = "s".repeat(64 * 1024);
    // name, the tag repeated, how often, the context, the bytes one tag prints
    const cases: [string, string, number, Partial<RenderContext>, number][] = [
      ["readable", "{{join scope.readable}}", 10_000, { scope: { readable, writable: [], summary: "" } }, 0],
      ["summary", "{{scope.summary}}", 10_000, { scope: { readable: [], writable: [], summary } }, summary.length],
      ["tools", "{{join tools}}", 10_000, { tools }, 0],
      ["tools_in_a_block", "{{#if cwd}}{{join tools}}{{/if}}", 3_000, { tools }, 0],
    ];
    for (const [name, tag, times, context, printed] of cases) {
      p.write(`$workspace/${name}`, tag.repeat(times));
      const template = await SystemPromptTemplate.parse(`$workspace/${name}`, p.loader);
      const ctx = sampleContext(context);
      const list = name === "readable" ? readable : tools;
      const piece = printed > 0 ? printed : [...list].sort().join(", ").length;
      const error = renderError(template, ctx);
      const counted = Number(/at least (\d+)/.exec(error.message)?.[1]);
      expect([name, error.code, error.ref]).toEqual([name, "OUTPUT_TOO_LARGE", `$workspace/${name}`]);
      // It stopped at the value that crossed the cap, not after building the whole body.
      expect(counted).toBeGreaterThan(cap);
      expect(counted).toBeLessThanOrEqual(cap + piece);
    }
  });

  it("counts_an_include_s_indentation_before_building_it", async () => {
    // 100,000 short lines, each indented by 5,000 spaces, would be a 500 MB string.
    p.write("$workspace/wide", `Head\n${" ".repeat(5000)}{{> lines}}\nTail\n`);
    p.write("$workspace/lines", "x\n".repeat(100_000));
    const template = await SystemPromptTemplate.parse("$workspace/wide", p.loader);
    const error = renderError(template, sampleContext());
    expect(where(error)).toEqual({
      phase: "render",
      code: "OUTPUT_TOO_LARGE",
      ref: "$workspace/wide",
      file: p.fileOf("$workspace/wide"),
      line: 2,
      column: 5001,
    });
    p.write("$workspace/narrow", "Head\n  {{> two}}\nTail\n");
    p.write("$workspace/two", "a\nb\n");
    const narrow = await SystemPromptTemplate.parse("$workspace/narrow", p.loader);
    const exact = "Head\n  a\n  b\nTail\n";
    expect(narrow.renderInstruction(sampleContext(), { maxOutputBytes: exact.length })).toBe(exact);
    expect(where(renderError(narrow, sampleContext(), { maxOutputBytes: exact.length - 1 }))).toMatchObject({
      code: "OUTPUT_TOO_LARGE",
    });
  });
});

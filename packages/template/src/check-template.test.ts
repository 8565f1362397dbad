import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { checkTemplate } from "./check-template.ts";
import { loadHandlebarsParser, parseTemplateText } from "./handlebars-parser.ts";
import { SystemPromptError, type SystemPromptErrorCode } from "./system-prompt-error.ts";
import { propertyRuns } from "../../../test/support/property-runs.ts";

// The parsing functions used here need Handlebars' parser loaded, as SystemPromptTemplate.parse does.
await loadHandlebarsParser();

const resolve = (name: string): string => (name.startsWith("$") ? name : `$workspace/${name}`);

function check(text: string) {
  return checkTemplate(parseTemplateText(text), { ref: "$workspace/t", file: "/p/t.md" }, resolve);
}

function failure(text: string): { code: SystemPromptErrorCode; line?: number; column?: number; message: string } {
  try {
    check(text);
  } catch (error) {
    if (!SystemPromptError.is(error)) throw error;
    expect([error.phase, error.ref, error.file]).toEqual(["parse", "$workspace/t", "/p/t.md"]);
    return {
      code: error.code,
      message: error.message,
      ...(error.line !== undefined ? { line: error.line } : {}),
      ...(error.column !== undefined ? { column: error.column } : {}),
    };
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

/** Every problem of a failing check as [code, line, column]; also checks the thrown error is the first. */
function problems(text: string): [SystemPromptErrorCode, number | undefined, number | undefined][] {
  try {
    check(text);
  } catch (error) {
    if (!SystemPromptError.is(error)) throw error;
    expect(error.problems[0]).toBe(error);
    expect(
      error.problems.every((p) => SystemPromptError.is(p) && p.ref === "$workspace/t" && p.file === "/p/t.md"),
    ).toBe(true);
    return error.problems.map((p) => [p.code, p.line, p.column]);
  }
  throw new Error(`no error for ${JSON.stringify(text)}`);
}

describe("checkTemplate: every problem in a file", () => {
  it("reports_two_unknown_variables_in_document_order", () => {
    expect(problems("{{cwdd}}\nok {{cwd}}\n  {{tols}}")).toEqual([
      ["UNKNOWN_VARIABLE", 1, 3],
      ["UNKNOWN_VARIABLE", 3, 5],
    ]);
  });

  it("reports_three_problems_of_different_kinds_with_positions", () => {
    const text = "Hi {{scope}}\n{{#each tools}}{{@idx}}{{/each}}\n{{#foo}}x{{/foo}} {{{{raw}}}}{{{{/raw}}}}";
    expect(problems(text)).toEqual([
      ["TYPE_ERROR", 1, 6],
      ["UNKNOWN_VARIABLE", 2, 18],
      ["UNKNOWN_HELPER", 3, 4],
      ["FORBIDDEN", 3, 19],
    ]);
  });

  it("the_thrown_error_is_the_first_problem_and_keeps_its_message", () => {
    const first = failure("{{dat}} {{tols}}");
    expect(first).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: 3 });
    expect(first.message).toContain('unknown variable "dat"');
  });

  it("a_single_problem_lists_itself", () => {
    expect(problems("ok {{cwd}} {{tols}}")).toEqual([["UNKNOWN_VARIABLE", 1, 14]]);
  });

  it("does_not_cascade_from_an_unknown_block_argument", () => {
    expect(problems("{{#each typo}}{{this.name}} {{name}} {{@index}}{{join this}}{{/each}}\n{{tols}}")).toEqual([
      ["UNKNOWN_VARIABLE", 1, 9],
      ["UNKNOWN_VARIABLE", 2, 3],
    ]);
    expect(
      problems("{{#each typo as |t i|}}{{t.name}}{{t}}{{i}}{{/each}}{{#with nope as |s|}}{{s.x}}{{summary}}{{/with}}"),
    ).toEqual([
      ["UNKNOWN_VARIABLE", 1, 9],
      ["UNKNOWN_VARIABLE", 1, 61],
    ]);
    expect(problems("{{#each cwd}}{{this.x}}{{/each}}{{#with tools}}{{y}}{{/with}}")).toEqual([
      ["TYPE_ERROR", 1, 9],
      ["TYPE_ERROR", 1, 41],
    ]);
    expect(problems("{{#foo}}{{bar}}{{/foo}}{{#if typo.x}}{{cwdd}}{{/if}}")).toEqual([
      ["UNKNOWN_HELPER", 1, 4],
      ["UNKNOWN_VARIABLE", 1, 30],
      ["UNKNOWN_VARIABLE", 1, 40],
    ]);
  });

  it("each_failing_include_name_is_its_own_problem", () => {
    const refuse = (name: string): string => {
      if (name.endsWith(".md")) throw new Error(`"${name}" has an extension`);
      return `$workspace/${name}`;
    };
    try {
      checkTemplate(parseTemplateText("{{> a.md}}\n{{> ok}}\n{{> b.md}}"), { ref: "$workspace/t" }, refuse);
      throw new Error("no error");
    } catch (error) {
      if (!SystemPromptError.is(error)) throw error;
      expect(error.problems.map((p) => [p.code, p.line, p.column, (p.cause as Error).message])).toEqual([
        ["INCLUDE_FAILED", 1, 1, '"a.md" has an extension'],
        ["INCLUDE_FAILED", 3, 1, '"b.md" has an extension'],
      ]);
    }
  });

  it("stops_listing_at_one_hundred_problems", () => {
    const list = problems("{{x}}".repeat(250));
    expect(list.length).toBe(100);
    expect(list.at(-1)).toEqual(["UNKNOWN_VARIABLE", 1, 99 * 5 + 3]);
  });
});

describe("checkTemplate", () => {
  it("accepts_every_variable_helper_and_scope", () => {
    const text = [
      "{{date}} {{time}} {{datetime}} {{cwd}} {{scope.summary}} {{{cwd}}} {{&cwd}} {{this.cwd}}",
      '{{join tools}} {{join scope.readable "\\n"}} {{join scope.writable cwd}}',
      "{{#if tools}}{{else if cwd}}{{else}}{{/if}}{{#unless scope.writable}}ro{{/unless}}",
      "{{#each tools}}{{this}}{{.}}{{@index}}{{@first}}{{@last}}{{@key}}{{cwd}}{{scope.summary}}{{#if @first}}{{/if}}{{else}}none{{/each}}",
      "{{#each tools as |tool i|}}{{tool}}{{i}}{{#each scope.readable as |p|}}{{tool}}{{p}}{{/each}}{{/each}}",
      "{{#with scope}}{{summary}}{{join readable}}{{cwd}}{{#each writable}}{{this}}{{/each}}{{/with}}",
      "{{#with scope as |s|}}{{s.summary}}{{/with}}{{! comment }}{{!-- {{nope}} --}}\\{{literal}}",
    ].join("\n");
    expect(check(text).includes).toEqual([]);
  });

  it("rejects_unknown_variables_everywhere_with_positions", () => {
    expect(failure("Today: {{dat}}")).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: 10 });
    expect(failure("Today: {{dat}}").message).toBe(
      '$workspace/t:1:10: unknown variable "dat" (did you mean "date"?); the variables are date, time, datetime, cwd, scope.readable, scope.writable, scope.summary, tools',
    );
    expect(failure("a\n{{#if typo}}x{{/if}}")).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 2, column: 7 });
    expect(failure("{{#each tools}}\n  {{tool}}\n{{/each}}")).toMatchObject({
      code: "UNKNOWN_VARIABLE",
      line: 2,
      column: 5,
    });
    expect(failure("{{#each tools}}{{tool}}{{/each}}").message).toContain('did you mean "tools"?');
    expect(failure("{{#if cwd}}{{else}}{{summary}}{{/if}}").message).toContain('did you mean "scope.summary"?');
    expect(failure("{{scope.sumary}}")).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: 3 });
    expect(failure("{{scope.sumary}}").message).toContain(
      '"scope" has no member "sumary" (did you mean "scope.summary"?)',
    );
    expect(failure("{{@index}}")).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: 3 });
    expect(failure("{{#each tools}}{{@idx}}{{/each}}").message).toContain('did you mean "@index"?');
    expect(failure("{{#each tools as |t|}}{{/each}}{{t}}")).toMatchObject({ code: "UNKNOWN_VARIABLE", column: 34 });
  });

  it("rejects_prototype_names_as_unknown_variables", () => {
    for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "valueOf"]) {
      expect(failure(`{{${name}}}`)).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: 3 });
      expect(failure(`{{scope.${name}}}`).code).toBe("UNKNOWN_VARIABLE");
      expect(failure(`{{#each tools}}{{@${name}}}{{/each}}`).code).toBe("UNKNOWN_VARIABLE");
      expect(failure(`{{#with scope}}{{${name}}}{{/with}}`).code).toBe("UNKNOWN_VARIABLE");
    }
  });

  it("rejects_type_errors_with_positions", () => {
    expect(failure("x {{cwd.x}}")).toMatchObject({ code: "TYPE_ERROR", line: 1, column: 5 });
    expect(failure("x {{cwd.x}}").message).toContain('"cwd" is a string and has no member "x"');
    expect(failure("{{tools.length}}").message).toContain('{{join tools ", "}}');
    expect(failure("\n {{scope}}")).toMatchObject({ code: "TYPE_ERROR", line: 2, column: 4 });
    expect(failure("{{scope}}").message).toContain("{{scope.summary}}");
    expect(failure("{{tools}}")).toMatchObject({ code: "TYPE_ERROR", line: 1, column: 3 });
    expect(failure("{{tools}}").message).toContain('{{join tools ", "}}');
    expect(failure("{{#each cwd}}{{/each}}")).toMatchObject({ code: "TYPE_ERROR", line: 1, column: 9 });
    expect(failure("{{#each scope}}{{/each}}").code).toBe("TYPE_ERROR");
    expect(failure("{{#with cwd}}{{/with}}").code).toBe("TYPE_ERROR");
    expect(failure("{{#each tools}}{{this.name}}{{/each}}").code).toBe("TYPE_ERROR");
    expect(failure("{{join cwd}}")).toMatchObject({ code: "TYPE_ERROR", column: 8 });
    expect(failure("{{join}}").code).toBe("TYPE_ERROR");
    expect(failure("{{join tools tools}}").code).toBe("TYPE_ERROR");
    expect(failure("{{this}}").code).toBe("TYPE_ERROR");
    expect(failure("{{#if}}{{/if}}").code).toBe("TYPE_ERROR");
  });

  it("rejects_forbidden_constructs_with_positions", () => {
    const cases: [string, SystemPromptErrorCode, number, number][] = [
      ["{{log cwd}}", "UNKNOWN_HELPER", 1, 3],
      ["{{lookup scope 'summary'}}", "UNKNOWN_HELPER", 1, 3],
      ["{{helperMissing}}", "UNKNOWN_VARIABLE", 1, 3],
      ["a {{* foo}}", "FORBIDDEN", 1, 3],
      ['{{#*inline "x"}}y{{/inline}}', "FORBIDDEN", 1, 1],
      ["\n{{#> layout}}x{{/layout}}", "FORBIDDEN", 2, 1],
      ["{{> (which)}}", "FORBIDDEN", 1, 1],
      ["{{> header this}}", "FORBIDDEN", 1, 12],
      ["{{> header a=1}}", "FORBIDDEN", 1, 12],
      ["{{#each tools}}{{../cwd}}{{/each}}", "FORBIDDEN", 1, 18],
      ["{{#each tools}}{{#each scope.readable}}{{@../index}}{{/each}}{{/each}}", "FORBIDDEN", 1, 42],
      ["{{@root.cwd}}", "FORBIDDEN", 1, 3],
      ["{{join (join tools)}}", "FORBIDDEN", 1, 8],
      ["{{#if (join tools)}}{{/if}}", "FORBIDDEN", 1, 7],
      ["{{{{raw}}}}{{x}}{{{{/raw}}}}", "FORBIDDEN", 1, 1],
      ["{{^tools}}none{{/tools}}", "FORBIDDEN", 1, 1],
      ["{{#tools}}x{{/tools}}", "FORBIDDEN", 1, 4],
      ['{{"text"}}', "FORBIDDEN", 1, 3],
      ["{{#if cwd includeZero=true}}{{/if}}", "FORBIDDEN", 1, 11],
      ["{{#if cwd as |x|}}{{/if}}", "FORBIDDEN", 1, 1],
      ["{{#each tools as |join|}}{{join scope.readable}}{{/each}}", "FORBIDDEN", 1, 1],
      ["{{#with scope as |if|}}{{#if if}}x{{/if}}{{/with}}", "FORBIDDEN", 1, 1],
      ["\n  {{#each tools as |a-this|}}{{/each}}", "FORBIDDEN", 2, 3],
      ["{{#each tools as |t xthis|}}{{t}}{{/each}}", "FORBIDDEN", 1, 1],
      ["{{if cwd}}", "FORBIDDEN", 1, 1],
      ["{{#join tools}}{{/join}}", "FORBIDDEN", 1, 1],
      ["{{shout cwd}}", "UNKNOWN_HELPER", 1, 3],
      ["{{#eahc tools}}{{/eahc}}", "UNKNOWN_HELPER", 1, 4],
    ];
    for (const [text, code, line, column] of cases) {
      expect({ text, ...failure(text), message: undefined }).toEqual({ text, code, line, column, message: undefined });
    }
    expect(failure("{{#eahc tools}}{{/eahc}}").message).toContain('did you mean "each"?');
  });

  it("block_parameters_named_like_data_variables_are_forbidden", () => {
    // Handlebars looks block parameters up before @index, @first, @last, @key and @root, so
    // each of these would print something else in Handlebars than here (issue 19).
    const cases: [string, number, number][] = [
      ["{{#each tools as |t index|}}{{@index}},{{/each}}", 1, 1],
      ["{{#each tools as |first|}}{{#if @first}}F{{/if}}{{/each}}", 1, 1],
      ["{{#each tools as |t last|}}{{@last}}{{/each}}", 1, 1],
      ["{{#each tools}}\n  {{#with scope as |key|}}{{@key}}{{/with}}{{/each}}", 2, 3],
      ["{{#each tools as |t index|}}{{#each scope.readable}}{{@index}}{{/each}}{{/each}}", 1, 1],
      ["{{#each tools as |root|}}{{cwd}}{{/each}}", 1, 1],
      ["{{#with scope as |root|}}{{summary}}{{/with}}", 1, 1],
    ];
    for (const [text, line, column] of cases) {
      const found = failure(text);
      expect({ text, code: found.code, line: found.line, column: found.column }).toEqual({
        text,
        code: "FORBIDDEN",
        line,
        column,
      });
      expect(found.message).toMatch(
        /a block parameter cannot be named "(index|first|last|key|root)": Handlebars would read/,
      );
    }
    // Names that only contain them are fine.
    expect(check("{{#each tools as |t indexed|}}{{t}}{{indexed}}{{/each}}").ownNodes).toBe(3);
  });

  it("rewrites_includes_to_per_site_partials_that_get_the_root_context", () => {
    const checked = check('a\n  {{> common/header}}{{> "$user/x"}}\n{{#each tools}}{{> $insomnia/item}}{{/each}}');
    expect(checked.includes.map((s) => [s.target, s.line, s.column])).toEqual([
      ["$workspace/common/header", 2, 3],
      ["$user/x", 2, 22],
      ["$insomnia/item", 3, 16],
    ]);
    expect(new Set(checked.includes.map((s) => s.partialName)).size).toBe(3);
    expect(checked.ownNodes).toBe(6);
  });

  it("wraps_an_invalid_include_name_as_include_failed", () => {
    const cause = new Error("bad ref");
    let caught: unknown;
    try {
      checkTemplate(parseTemplateText("x\n {{> bad.md}}"), { ref: "$workspace/t" }, () => {
        throw cause;
      });
    } catch (error) {
      caught = error;
    }
    expect(SystemPromptError.is(caught) && [caught.code, caught.line, caught.column, caught.cause]).toEqual([
      "INCLUDE_FAILED",
      2,
      2,
      cause,
    ]);
  });

  it("any_other_name_is_an_unknown_variable_at_its_position", () => {
    const known = new Set([
      "date",
      "time",
      "datetime",
      "cwd",
      "scope",
      "tools",
      "if",
      "unless",
      "each",
      "with",
      "join",
      "else",
      "this",
      "true",
      "false",
      "null",
      "undefined",
      "as",
    ]);
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z][a-z0-9_]{0,12}$/).filter((name) => !known.has(name)),
        fc.nat({ max: 20 }),
        (name, pad) => {
          const prefix = " ".repeat(pad);
          expect(failure(`${prefix}{{${name}}}`)).toMatchObject({ code: "UNKNOWN_VARIABLE", line: 1, column: pad + 3 });
          expect(failure(`${prefix}{{#if ${name}}}x{{/if}}`)).toMatchObject({
            code: "UNKNOWN_VARIABLE",
            line: 1,
            column: pad + 7,
          });
          expect(failure(`${prefix}{{#each tools}}{{${name}}}{{/each}}`)).toMatchObject({
            code: "UNKNOWN_VARIABLE",
            column: pad + 18,
          });
        },
      ),
      { numRuns: propertyRuns(60, 300) },
    );
  });
});

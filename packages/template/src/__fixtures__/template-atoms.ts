/**
 * Pieces of template text for generated templates: valid and invalid tags, every helper,
 * loop variables, block parameters, whitespace control, standalone lines, an include
 * (`{{> part}}`), text with unicode. Joined at random, most results parse and many pass the checker.
 */
export const TEMPLATE_ATOMS: readonly string[] = [
  "{{cwd}}", "{{date}}", "{{time}}", "{{datetime}}", "{{#if tools}}", "{{else}}", "{{/if}}", "{{#each tools}}",
  "{{@index}}", "{{@key}}", "{{@first}}", "{{this}}", "{{.}}", "{{@last}}", "{{/each}}", "{{~cwd~}}", "{{!-- c --}}",
  "{{! c}}", "\n", "  ", "\t", "text", "{{> part}}", "  {{> part}}\n", "{{join tools \", \"}}", "{{join tools}}",
  "{{#with scope}}", "{{summary}}", "{{join readable}}", "{{/with}}", "{{{cwd}}}", "\\{{cwd}}", "é\u2028", "😀",
  "{{#unless tools}}", "{{/unless}}", "{{else if tools}}", "{{else if @first}}", "{{join scope.readable}}",
  "{{#each scope.readable as |path i|}}", "{{path}}:{{i}}", "{{#each tools as |tool|}}", "{{tool}}",
  "{{#with scope as |s|}}", "{{s.summary}}", "{{join tools scope.summary}}", "{{#if @last}}", "{{#unless @first}}",
  "{{~#if tools~}}", "{{~/if~}}", "{{scope.summary}}", "{{nope}}", "{{",
];

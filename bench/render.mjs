// Benchmark 1: rendering the builtin default instruction, warm and cold, against raw
// Handlebars (the floor) and the dotprompt package (a peer), in one process.
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import Handlebars from "handlebars";
import { Dotprompt } from "dotprompt";
import { compare, fmtMs, fmtRatio, importDist, main, met, result } from "./lib.mjs";

const { SystemPromptTemplate, clearTemplateCache, assembleSystemPrompt } = await importDist("template");
const { PromptLoader, BUILTIN_PROMPTS_DIR } = await importDist("prompt-loader");

const NOW = new Date(Date.UTC(2026, 10, 30, 16, 37, 0));
const TOOLS = ["write_file", "read_file", "list_dir", "run_command", "search", "edit_file", "web_fetch", "git_diff"];
const SCOPE = {
  readable: ["/home/me/repo", "/usr/share/doc"],
  writable: ["/home/me/repo"],
  summary: "Readable:\n  - /home/me/repo\n  - /usr/share/doc\nWritable:\n  - /home/me/repo",
};
/** What our render gets. */
export const CONTEXT = { now: NOW, cwd: "/home/me/repo", scope: SCOPE, tools: TOOLS };
/** What raw Handlebars and dotprompt get: the same values our render computes from CONTEXT. */
export const DATA = {
  date: "2026-11-30",
  time: "16:37:00",
  datetime: "2026-11-30T16:37:00Z",
  cwd: CONTEXT.cwd,
  scope: SCOPE,
  tools: [...TOOLS].sort(),
};

function join_(list, separator) {
  return list.join(typeof separator === "string" ? separator : ", ");
}

function trimNewlines(text) {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 10) end--;
  return text.slice(0, end);
}

/** The trailing section, concatenated the way the template README specifies it (no AGENTS.md). */
export function trailing(instruction, summary) {
  const body = trimNewlines(instruction);
  return `${body === "" ? "" : `${body}\n\n`}---\n## Working boundaries\n\n${trimNewlines(summary)}\n`;
}

/** Raw Handlebars with the options the issue names: the floor. */
export function floorRenderer(text) {
  const hb = Handlebars.create();
  hb.registerHelper("join", join_);
  const compiled = hb.compile(text, { noEscape: true, strict: true });
  return (data) => compiled(data);
}

export default async function run(log) {
  const source = await readFile(join(BUILTIN_PROMPTS_DIR, "default.md"), "utf8");
  const loader = new PromptLoader();
  const template = await SystemPromptTemplate.parse("$insomnia/default", loader);

  const floor = floorRenderer(source);
  // The builtin instruction's AST ships prebuilt (dist/prebuilt-asts.json, keyed by its text),
  // so parsing it skips Handlebars' parser. To time a real parse of the same template, these
  // loaders hand out the file's text plus one "\n": not prebuilt, not cached, and the prompt
  // is the same (the trailing section drops the instruction's trailing newlines).
  const reparsed = (loaded) => ({
    ref: loaded.ref,
    text: `${loaded.text}\n`,
    file: loaded.file,
    get sha256() {
      return loaded.sha256;
    },
  });
  const parsingLoader = { load: async (ref) => reparsed(await loader.load(ref)) };
  const loaded = await loader.load("$insomnia/default");
  const memoryLoader = { load: async () => reparsed(loaded) };
  const dp = new Dotprompt({ helpers: { join: join_ } });
  const dpCompiled = await dp.compile(source);
  const dpText = async (data) => {
    const rendered = await dpCompiled({ input: data });
    return rendered.messages.map((m) => m.content.map((part) => part.text ?? "").join("")).join("");
  };

  // The three must print the same text before any of them is timed.
  const ours = template.render(CONTEXT);
  const floorOut = trailing(floor(DATA), SCOPE.summary);
  const dpOut = trailing(await dpText(DATA), SCOPE.summary);
  const same = ours === floorOut && ours === dpOut;
  if (ours !== floorOut) throw new Error("our render and raw Handlebars differ; fix the benchmark data");
  for (const other of [parsingLoader, memoryLoader]) {
    clearTemplateCache();
    if ((await SystemPromptTemplate.parse("$insomnia/default", other)).render(CONTEXT) !== ours)
      throw new Error("the parsing loaders render something else");
  }
  if (
    ours !== assembleSystemPrompt({ instruction: template.renderInstruction(CONTEXT), scopeSummary: SCOPE.summary })
  ) {
    throw new Error("render is not renderInstruction + assembleSystemPrompt");
  }
  log(
    `outputs: ours ${ours.length} chars; raw Handlebars ${same ? "identical" : "differs"}; dotprompt ${ours === dpOut ? "identical" : "differs"}`,
  );

  log("warm render (ours, floor, dotprompt compiled)…");
  const warm = await compare(
    {
      ours: () => template.render(CONTEXT),
      ourInstruction: () => template.renderInstruction(CONTEXT),
      floor: () => trailing(floor(DATA), SCOPE.summary),
      floorInstruction: () => floor(DATA),
      dotprompt: async () => trailing(await dpText(DATA), SCOPE.summary),
    },
    { batch: 50, time: 600, rounds: 3 },
  );

  log("cold parse + first render vs dotprompt render from source…");
  const cold = await compare(
    {
      ours: async () => {
        clearTemplateCache();
        const t = await SystemPromptTemplate.parse("$insomnia/default", parsingLoader);
        return t.render(CONTEXT);
      },
      oursPrebuilt: async () => {
        clearTemplateCache();
        const t = await SystemPromptTemplate.parse("$insomnia/default", loader);
        return t.render(CONTEXT);
      },
      dotprompt: async () => {
        const rendered = await dp.render(source, { input: DATA });
        return rendered.messages;
      },
      dotpromptNewInstance: async () => {
        const rendered = await new Dotprompt({ helpers: { join: join_ } }).render(source, { input: DATA });
        return rendered.messages;
      },
      oursInMemory: async () => {
        clearTemplateCache();
        const t = await SystemPromptTemplate.parse("$insomnia/default", memoryLoader);
        return t.render(CONTEXT);
      },
      loadOnly: () => loader.load("$insomnia/default"),
      floor: () => trailing(floorRenderer(source)(DATA), SCOPE.summary),
    },
    { batch: 5, time: 800, rounds: 3 },
  );

  const r = (a, b) => a.ms / b.ms;
  const vsFloor = r(warm.ours, warm.floor);
  const vsFloorInstr = r(warm.ourInstruction, warm.floorInstruction);
  const dpOverOurs = warm.dotprompt.ms / warm.ours.ms;
  const coldRatio = r(cold.ours, cold.dotprompt);
  return result(1, "Render of the builtin default instruction", {
    rows: [
      {
        figure: "warm `render` (instruction + trailing section)",
        ours: fmtMs(warm.ours.ms),
        reference: `raw Handlebars + same trailing concat: ${fmtMs(warm.floor.ms)}`,
        ratio: fmtRatio(vsFloor),
        goal: "≤ 1.2x",
        met: met(vsFloor <= 1.2),
      },
      {
        figure: "warm `renderInstruction` (no trailing section)",
        ours: fmtMs(warm.ourInstruction.ms),
        reference: `raw Handlebars: ${fmtMs(warm.floorInstruction.ms)}`,
        ratio: fmtRatio(vsFloorInstr),
        goal: "(≤ 1.2x)",
        met: met(vsFloorInstr <= 1.2),
      },
      {
        figure: "warm `render` vs dotprompt compiled render",
        ours: fmtMs(warm.ours.ms),
        reference: `dotprompt \`compile\`d fn + same trailing concat: ${fmtMs(warm.dotprompt.ms)}`,
        ratio: `${fmtRatio(warm.ours.ms / warm.dotprompt.ms)} (dotprompt ${dpOverOurs.toFixed(1)}x slower)`,
        goal: "dotprompt ≥ 3x slower",
        met: met(dpOverOurs >= 3),
      },
      {
        figure: "cold `parse` (cache cleared: load, Handlebars parse, checks, compile) + first `render`",
        ours: fmtMs(cold.ours.ms),
        reference: `dotprompt \`render(source)\`: ${fmtMs(cold.dotprompt.ms)}`,
        ratio: fmtRatio(coldRatio),
        goal: "≤ 1x",
        met: met(coldRatio <= 1),
      },
      {
        figure: "(what `pod prompt` does) the same with the builtin's prebuilt AST",
        ours: fmtMs(cold.oursPrebuilt.ms),
        reference: `dotprompt \`render(source)\`: ${fmtMs(cold.dotprompt.ms)}`,
        ratio: fmtRatio(r(cold.oursPrebuilt, cold.dotprompt)),
        goal: "—",
        met: "—",
      },
      {
        figure: "(context) where the cold time goes",
        ours: `\`loader.load\` of the file alone: ${fmtMs(cold.loadOnly.ms)}`,
        reference: `cold parse + render with an in-memory loader (no file I/O): ${fmtMs(cold.oursInMemory.ms)}`,
        ratio: `in-memory vs dotprompt: ${fmtRatio(r(cold.oursInMemory, cold.dotprompt))}`,
        goal: "—",
        met: "—",
      },
      {
        figure: "(context) cold, other references",
        ours: fmtMs(cold.ours.ms),
        reference: `raw Handlebars compile + first render: ${fmtMs(cold.floor.ms)}; new Dotprompt() + render: ${fmtMs(cold.dotpromptNewInstance.ms)}`,
        ratio: `${fmtRatio(r(cold.ours, cold.floor))} / ${fmtRatio(r(cold.ours, cold.dotpromptNewInstance))}`,
        goal: "—",
        met: "—",
      },
    ],
    notes: [
      `Template: \`$insomnia/default\` (${Buffer.byteLength(source)} bytes, no includes, so the "flattened" template is the file itself); 8 tools, 2 readable paths, no AGENTS.md. Output ${Buffer.byteLength(ours)} bytes.`,
      `Output check: raw Handlebars + trailing concat is byte-identical to our \`render\`; dotprompt's output (the text parts of its message list, joined, + the same trailing concat) is ${ours === dpOut ? "byte-identical too" : "NOT identical"}.`,
      "Ours: `SystemPromptTemplate.render(ctx)` — validates the context, formats date/time, sorts tools, builds frozen data (or reuses it for an equal context), runs the file's compiled closures (counting steps and output), appends the trailing section. Handlebars only parses; the checked AST is compiled to closures by the package's own renderer. The floor gets the already-formatted data object (`Handlebars.create()`, `compile(text, {noEscape: true, strict: true})`, a registered `join`).",
      "dotprompt: one `new Dotprompt({helpers: {join}})`; warm = the function returned by `await dp.compile(source)` called with `{input: data}` (it re-resolves metadata and splits the text into a message list each call); cold = `await dp.render(source, {input: data})` from the in-memory source string (parse + compile + render every call).",
      "Cold, ours: `clearTemplateCache()`, then `SystemPromptTemplate.parse(\"$insomnia/default\", loader)` (realpath, stat, open, read of the file; Handlebars parse; the checker; compile to closures) and the first `render`. The goal row hands the template the file's text plus one `\\n` so that it is really parsed: the builtin's text has a prebuilt AST (next row), which skips Handlebars' parser. In-process, so the JIT is warm: this is a cold *cache*, not a cold process (that is benchmark 5).",
      `Samples: warm ${warm.ours.samples} per task (each a batch of 50 calls), cold ${cold.ours.samples} per task (batches of 5); median of 3 rotated tinybench rounds.`,
    ],
  });
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);

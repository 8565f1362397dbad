// Benchmark 5: `pod prompt` and `pod check` as a whole, cold process against `node -e 0`, alternating.
// POD_BIN=<file> times another build of the bin in the same way; POD_BIN_BEFORE=<file> also
// times that build in the same alternation (context rows), for before/after ratios of one run.
import { spawnSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { distFile, fmtMs, fmtRatio, main, median, met, result, ROOT, tempDir } from "./lib.mjs";

const DEFAULT_PROMPT = join(ROOT, "resources", "prompts", "default.md");

const SAMPLES = 30;

function time(args, options) {
  const t0 = performance.now();
  const child = spawnSync(process.execPath, args, options);
  const ms = performance.now() - t0;
  if (child.status !== 0) {
    throw new Error(`\`node ${args.join(" ")}\` exited with ${child.status}: ${String(child.stderr).slice(0, 500)}`);
  }
  return { ms, stdout: String(child.stdout) };
}

export default async function run(log) {
  const bin = process.env.POD_BIN ?? distFile("cli", "bin.cjs");
  const { dir, cleanup } = await tempDir("cli");
  try {
    const cwd = join(dir, "workspace");
    await mkdir(cwd, { recursive: true });
    // A second workspace as users have it (issue 15): a manifest and a `$workspace` instruction
    // (the builtin's text plus a line, so not prebuilt) that includes two more workspace files.
    // This run loads yaml, valibot and Handlebars' parser.
    const configured = join(dir, "configured");
    const prompts = join(configured, ".insomnia", "prompts");
    await mkdir(prompts, { recursive: true });
    await writeFile(join(configured, ".insomnia", "pod.yaml"), 'worker:\n  instruction: "$workspace/main"\n');
    await writeFile(
      join(prompts, "main.md"),
      `${await readFile(DEFAULT_PROMPT, "utf8")}\nProject: {{cwd}}\n\n{{> "$workspace/style"}}\n{{> "$workspace/testing"}}\n`,
    );
    await writeFile(
      join(prompts, "style.md"),
      '## Style\n\nKeep changes small{{#if tools}}; tools: {{join tools ", "}}{{/if}}.\n',
    );
    await writeFile(join(prompts, "testing.md"), "## Testing\n\nRun `make test` in {{cwd}} before you finish.\n");
    // No user layer from the real home: an empty config dir.
    const env = { PATH: process.env.PATH, HOME: dir, XDG_CONFIG_HOME: join(dir, "config"), NO_COLOR: "1" };
    const options = { cwd, env, encoding: "utf8", maxBuffer: 16 * 1024 * 1024 };
    // Run from packages/manifest: yaml and valibot are its dependencies, handlebars resolves
    // from the root; import() in -e resolves against the working directory, with ESM conditions.
    const depsOptions = { ...options, cwd: join(ROOT, "packages", "manifest") };
    const depsScript = "import('handlebars');import('yaml');import('valibot')";
    const commands = {
      pod: ["--no-warnings", bin, "prompt", "--cwd", cwd],
      configured: ["--no-warnings", bin, "prompt", "--cwd", configured],
      check: ["--no-warnings", bin, "check", "--cwd", configured],
      empty: ["-e", "0"],
      deps: ["-e", depsScript],
      // The same runs without the bin's compile cache (context rows: a first run's cost).
      podNoCache: ["--no-warnings", bin, "prompt", "--cwd", cwd],
      configuredNoCache: ["--no-warnings", bin, "prompt", "--cwd", configured],
      checkNoCache: ["--no-warnings", bin, "check", "--cwd", configured],
    };
    const before = process.env.POD_BIN_BEFORE;
    if (before !== undefined) {
      commands.beforePod = ["--no-warnings", before, "prompt", "--cwd", cwd];
      commands.beforeConfigured = ["--no-warnings", before, "prompt", "--cwd", configured];
      commands.beforeCheck = ["--no-warnings", before, "check", "--cwd", configured];
    }
    const first = time(commands.pod, options);
    if (!first.stdout.includes("## Working boundaries")) throw new Error("`pod prompt` did not print a prompt");
    const configuredPrompt = time(commands.configured, options).stdout;
    if (
      !configuredPrompt.includes(`Project: ${configured}`) ||
      !configuredPrompt.includes(`Run \`make test\` in ${configured}`)
    )
      throw new Error("the configured workspace's instruction (and its includes) was not used");
    if (!time(commands.check, options).stdout.includes("3 source files"))
      throw new Error("`pod check` did not check the instruction and its two includes");
    const noCacheOptions = { ...options, env: { ...env, NODE_DISABLE_COMPILE_CACHE: "1" } };
    const optionsOf = (name) => (name === "deps" ? depsOptions : name.endsWith("NoCache") ? noCacheOptions : options);
    for (const name of Object.keys(commands)) time(commands[name], optionsOf(name)); // page cache and disk warm
    const samples = Object.fromEntries(Object.keys(commands).map((name) => [name, []]));
    log(
      `${SAMPLES} × (pod prompt, pod prompt and pod check with a manifest and includes, node -e 0, node -e import(handlebars, yaml, valibot)), alternating…`,
    );
    for (let i = 0; i < SAMPLES; i++) {
      const forward = [
        "pod",
        "empty",
        "configured",
        "check",
        "deps",
        "podNoCache",
        "configuredNoCache",
        "checkNoCache",
      ];
      if (before !== undefined) forward.push("beforePod", "beforeConfigured", "beforeCheck");
      const order = i % 2 === 0 ? forward : forward.toReversed();
      for (const name of order) samples[name].push(time(commands[name], optionsOf(name)).ms);
    }
    const pod = median(samples.pod);
    const empty = median(samples.empty);
    const depsMs = median(samples.deps);
    const configuredMs = median(samples.configured);
    const checkMs = median(samples.check);
    const ratio = pod / empty;
    return result(5, "`pod prompt` and `pod check` as a whole process, cold", {
      rows: [
        {
          figure: "`node packages/cli/dist/bin.cjs prompt --cwd <tmp workspace>`, wall time",
          ours: fmtMs(pod),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(ratio),
          goal: "≤ 2.5x",
          met: met(ratio <= 2.5),
        },
        {
          figure:
            "`pod prompt` in a workspace with `.insomnia/pod.yaml` and a `$workspace` instruction that includes two files",
          ours: fmtMs(configuredMs),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(configuredMs / empty),
          goal: "≤ 2.5x",
          met: met(configuredMs / empty <= 2.5),
        },
        {
          figure: "`pod check` in the same workspace",
          ours: fmtMs(checkMs),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(checkMs / empty),
          goal: "≤ 2.5x",
          met: met(checkMs / empty <= 2.5),
        },
        {
          figure: "(reference point) `node -e \"import('handlebars');import('yaml');import('valibot')\"`",
          ours: fmtMs(depsMs),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(depsMs / empty),
          goal: "—",
          met: "—",
        },
        ...[
          ["podNoCache", "`pod prompt`, empty workspace"],
          ["configuredNoCache", "`pod prompt`, the configured workspace"],
          ["checkNoCache", "`pod check`, the configured workspace"],
        ].map(([name, what]) => ({
          figure: `(context) ${what}, without the compile cache (\`NODE_DISABLE_COMPILE_CACHE=1\`: what every run costs when the cache cannot be used)`,
          ours: fmtMs(median(samples[name])),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(median(samples[name]) / empty),
          goal: "—",
          met: "—",
        })),
        ...(before === undefined
          ? []
          : [
              ["beforePod", "the empty workspace"],
              ["beforeConfigured", "the configured workspace"],
              ["beforeCheck", "`pod check`, the configured workspace"],
            ].map(([name, what]) => ({
              figure: `(before) \`${before}\`, ${what}`,
              ours: fmtMs(median(samples[name])),
              reference: `\`node -e 0\`: ${fmtMs(empty)}`,
              ratio: fmtRatio(median(samples[name]) / empty),
              goal: "—",
              met: "—",
            }))),
      ],
      notes: [
        `${SAMPLES} samples of each, alternating (order reversed every other round), each a \`spawnSync\` of \`${process.execPath}\` timed from spawn to exit; medians. Min/max: pod ${fmtMs(Math.min(...samples.pod))}/${fmtMs(Math.max(...samples.pod))}, with a manifest ${fmtMs(Math.min(...samples.configured))}/${fmtMs(Math.max(...samples.configured))}, check ${fmtMs(Math.min(...samples.check))}/${fmtMs(Math.max(...samples.check))}, \`node -e 0\` ${fmtMs(Math.min(...samples.empty))}/${fmtMs(Math.max(...samples.empty))}.`,
        "The workspace is an empty temp dir (default manifest, builtin instruction, no AGENTS.md); HOME and XDG_CONFIG_HOME point at an empty temp dir so no user manifest is read. Output is the full prompt on stdout (piped).",
        "The configured workspace: `.insomnia/pod.yaml` sets `worker.instruction: $workspace/main`; main.md is the builtin's text plus a line (so it is parsed, not prebuilt) and includes `$workspace/style` (an `#if` and `join`) and `$workspace/testing`. `pod prompt` prints the rendered prompt; `pod check` parses and checks the manifest and the three files and prints `ok`.",
        "The bin is CommonJS bundles run through its V8 compile cache (packages/cli/src/compile-cache.ts): dist/bin.cjs loads dist/pod.cjs (the CLI and our packages), which loads each third-party package from its own dist/vendor/<name>.cjs when a command first needs it. `pod prompt` in the empty workspace reads none of yaml, valibot and Handlebars' parser; the configured workspace reads yaml, valibot and Handlebars' parser. The AI SDK, pg and gpt-tokenizer are only read by `pod run` and `--explain`/`--json`. HOME is the temp dir, so the cache lives there: the warm-up run of each command writes it and the samples use it, as a user's second and later runs do; the `NODE_DISABLE_COMPILE_CACHE=1` rows show the cost without it.",
        "The dependency reference runs in packages/manifest (yaml and valibot are its dependencies, handlebars resolves from the repo root), imports the three without awaiting them; the process exits once they are loaded.",
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);

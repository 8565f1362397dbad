// Benchmark 5: `pod prompt` as a whole, cold process against `node -e 0`, alternating.
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
  const bin = distFile("cli", "bin.js");
  const { dir, cleanup } = await tempDir("cli");
  try {
    const cwd = join(dir, "workspace");
    await mkdir(cwd, { recursive: true });
    // A second workspace with a manifest and its own instruction (the builtin's text plus a
    // line, so not prebuilt): this run loads yaml, valibot and Handlebars' parser.
    const configured = join(dir, "configured");
    await mkdir(join(configured, ".insomnia", "prompts"), { recursive: true });
    await writeFile(join(configured, ".insomnia", "pod.yaml"), 'worker:\n  instruction: "$workspace/main"\n');
    await writeFile(
      join(configured, ".insomnia", "prompts", "main.md"),
      `${await readFile(DEFAULT_PROMPT, "utf8")}\nProject: {{cwd}}\n`,
    );
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
      empty: ["-e", "0"],
      deps: ["-e", depsScript],
    };
    const first = time(commands.pod, options);
    if (!first.stdout.includes("## Working boundaries")) throw new Error("`pod prompt` did not print a prompt");
    if (!time(commands.configured, options).stdout.includes(`Project: ${configured}`))
      throw new Error("the configured workspace's instruction was not used");
    const optionsOf = (name) => (name === "deps" ? depsOptions : options);
    for (const name of Object.keys(commands)) time(commands[name], optionsOf(name)); // page cache and disk warm
    const samples = { pod: [], configured: [], empty: [], deps: [] };
    log(
      `${SAMPLES} × (pod prompt, pod prompt with a manifest, node -e 0, node -e import(handlebars, yaml, valibot)), alternating…`,
    );
    for (let i = 0; i < SAMPLES; i++) {
      const order = i % 2 === 0 ? ["pod", "empty", "configured", "deps"] : ["deps", "configured", "empty", "pod"];
      for (const name of order) samples[name].push(time(commands[name], optionsOf(name)).ms);
    }
    const pod = median(samples.pod);
    const empty = median(samples.empty);
    const depsMs = median(samples.deps);
    const configuredMs = median(samples.configured);
    const ratio = pod / empty;
    return result(5, "`pod prompt` as a whole process, cold", {
      rows: [
        {
          figure: "`node packages/cli/dist/bin.js prompt --cwd <tmp workspace>`, wall time",
          ours: fmtMs(pod),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(ratio),
          goal: "≤ 2.5x",
          met: met(ratio <= 2.5),
        },
        {
          figure: "(reference point) `node -e \"import('handlebars');import('yaml');import('valibot')\"`",
          ours: fmtMs(depsMs),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(depsMs / empty),
          goal: "(stated ≈ 1.9x)",
          met: "—",
        },
        {
          figure: "(context) the same with a `.insomnia/pod.yaml` and a `$workspace` instruction",
          ours: fmtMs(configuredMs),
          reference: `\`node -e 0\`: ${fmtMs(empty)}`,
          ratio: fmtRatio(configuredMs / empty),
          goal: "—",
          met: "—",
        },
      ],
      notes: [
        `${SAMPLES} samples of each, alternating (order reversed every other round), each a \`spawnSync\` of \`${process.execPath}\` timed from spawn to exit; medians. Min/max: pod ${fmtMs(Math.min(...samples.pod))}/${fmtMs(Math.max(...samples.pod))}, with a manifest ${fmtMs(Math.min(...samples.configured))}/${fmtMs(Math.max(...samples.configured))}, \`node -e 0\` ${fmtMs(Math.min(...samples.empty))}/${fmtMs(Math.max(...samples.empty))}.`,
        "The workspace is an empty temp dir (default manifest, builtin instruction, no AGENTS.md); HOME and XDG_CONFIG_HOME point at an empty temp dir so no user manifest is read. Output is the full prompt on stdout (piped).",
        "What `pod prompt` loads: in the empty workspace none of handlebars, yaml and valibot (no manifest layer to parse or validate; the builtin instruction's AST is prebuilt; templates render with the package's own closures), nor node:crypto or node:zlib (hashes are computed when first read, the segment log is not touched). With a manifest file and a `$workspace` instruction (the context row) all three are loaded, as the reference point shows they cost.",
        "The dependency reference runs in packages/manifest (yaml and valibot are its dependencies, handlebars resolves from the repo root), imports the three without awaiting them; the process exits once they are loaded.",
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);

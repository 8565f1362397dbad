// Benchmark 7: the skills catalog. Discovery and parsing of 1, 100 and 2,000 skills (time per
// skill must stay flat), against the I/O floor (readdir + read of each SKILL.md); and
// `pod prompt` as a process in a workspace with 100 skills against the same workspace without.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { compare, distFile, fmtMs, fmtRatio, importDist, main, median, met, result, tempDir } from "./lib.mjs";

const { discoverSkills } = await importDist("skills");

const COUNTS = [1, 100, 2000];
const SAMPLES = 20;

function skillText(i) {
  const name = `skill-${String(i).padStart(4, "0")}`;
  return {
    name,
    text: `---\nname: ${name}\ndescription: Does task number ${i}; use it when the user asks for task ${i} or anything like it.\nlicense: MIT\nmetadata:\n  author: bench\n---\n# ${name}\n\n${"Step. ".repeat(80)}\n`,
  };
}

function writeSkills(root, count) {
  for (let i = 0; i < count; i++) {
    const { name, text } = skillText(i);
    mkdirSync(join(root, name), { recursive: true });
    writeFileSync(join(root, name, "SKILL.md"), text);
  }
}

function time(args, options) {
  const t0 = performance.now();
  const child = spawnSync(process.execPath, args, options);
  const ms = performance.now() - t0;
  if (child.status !== 0)
    throw new Error(`\`node ${args.join(" ")}\` exited with ${child.status}: ${String(child.stderr).slice(0, 500)}`);
  return { ms, stdout: String(child.stdout) };
}

export default async function run(log) {
  const { dir, cleanup } = await tempDir("skills");
  try {
    const env = { HOME: join(dir, "home"), XDG_CONFIG_HOME: join(dir, "config") };
    const measured = [];
    for (const count of COUNTS) {
      const cwd = join(dir, `ws-${count}`);
      const root = join(cwd, ".insomnia", "skills");
      writeSkills(root, count);
      const once = discoverSkills({ cwd, env });
      if (once.skills.length !== count || once.warnings.length > 0) {
        throw new Error(`discovery of ${count} skills found ${once.skills.length}, warnings ${once.warnings.length}`);
      }
      // The floor: list the root, read every SKILL.md, find the closing `---` line.
      const reference = () => {
        let n = 0;
        for (const name of readdirSync(root)) {
          const text = readFileSync(join(root, name, "SKILL.md"), "utf8");
          if (text.indexOf("\n---\n", 3) > 0) n++;
        }
        return n;
      };
      log(`${count} skills…`);
      const timing = await compare(
        { ours: () => discoverSkills({ cwd, env }), reference },
        { time: count >= 2000 ? 1500 : 500, rounds: 3, batch: count === 1 ? 20 : 1 },
      );
      measured.push({ count, ours: timing.ours.ms, reference: timing.reference.ms });
    }
    const per = (m) => m.ours / m.count;
    const at100 = measured.find((m) => m.count === 100);
    const at2000 = measured.find((m) => m.count === 2000);
    const rows = measured.map((m) => ({
      figure: `discover + parse ${m.count} skill${m.count === 1 ? "" : "s"}`,
      ours: `${fmtMs(m.ours)} (${fmtMs(per(m))} per skill)`,
      reference: `readdir + read each + find \`---\`: ${fmtMs(m.reference)}`,
      ratio: fmtRatio(m.ours / m.reference),
      goal: "—",
      met: "—",
    }));
    rows.push({
      figure: "time per skill, 2,000 vs 100 skills (linear)",
      ours: `${fmtMs(per(at2000))} per skill`,
      reference: `${fmtMs(per(at100))} per skill`,
      ratio: fmtRatio(per(at2000) / per(at100)),
      goal: "≤ 1.5x",
      met: met(per(at2000) / per(at100) <= 1.5),
    });

    // `pod prompt` as a process: 100 skills vs none, same workspace otherwise.
    const bin = distFile("cli", "bin.cjs");
    const without = join(dir, "prompt-without");
    const withSkills = join(dir, "prompt-with");
    mkdirSync(without, { recursive: true });
    writeSkills(join(withSkills, ".insomnia", "skills"), 100);
    const options = {
      env: { PATH: process.env.PATH, ...env, NO_COLOR: "1" },
      encoding: "utf8",
      maxBuffer: 16 * 1024 * 1024,
    };
    const commands = {
      without: ["--no-warnings", bin, "prompt", "--cwd", without],
      with: ["--no-warnings", bin, "prompt", "--cwd", withSkills],
    };
    const check = time(commands.with, options).stdout;
    if (!check.includes("## Skills")) throw new Error("`pod prompt` with skills printed no Skills section");
    for (const name of Object.keys(commands)) time(commands[name], options);
    const samples = { without: [], with: [] };
    log(`${SAMPLES} × (pod prompt without skills, with 100 skills), alternating…`);
    for (let i = 0; i < SAMPLES; i++) {
      const order = i % 2 === 0 ? ["without", "with"] : ["with", "without"];
      for (const name of order) samples[name].push(time(commands[name], options).ms);
    }
    const withMs = median(samples.with);
    const withoutMs = median(samples.without);
    rows.push({
      figure: "`pod prompt` process, workspace with 100 skills",
      ours: fmtMs(withMs),
      reference: `same workspace without skills: ${fmtMs(withoutMs)}`,
      ratio: fmtRatio(withMs / withoutMs),
      goal: "≤ 1.5x",
      met: met(withMs / withoutMs <= 1.5),
    });
    return result(7, "Skills: discovery, parsing and `pod prompt` with 100 skills", {
      rows,
      notes: [
        "Ours: `discoverSkills({ cwd, env })` of @insomnia/skills over `<cwd>/.insomnia/skills/<name>/SKILL.md` (the other three roots are absent): per root realpath + stat, a breadth-first walk (readdir with file types; realpath, stat and a containment check only for a symlinked directory; lstat of each directory's SKILL.md), then per skill open (O_NONBLOCK|O_NOFOLLOW), fstat (compared with the lstat), the descriptor's real path from /proc/self/fd (inside the root, and the scope check), a capped read, strict UTF-8 decode, the frontmatter split, the frontmatter read (simple `key: value` frontmatter without yaml, anything else through the safe YAML parse of @insomnia/manifest) and the name/description checks. The SHA-256 of the text is computed only when read (`pod prompt` never does).",
        "Reference (the floor): `readdirSync` of the root and `readFileSync` of every SKILL.md with a search for the closing `---`; no YAML, no checks.",
        "Each SKILL.md is about 600 bytes: name, a one-sentence description, license, a metadata map, a body.",
        `\`pod prompt\`: \`node packages/cli/dist/bin.cjs prompt --cwd <ws>\`, ${SAMPLES} alternating runs each, median; the 100-skill listing is over the default 8,000-character budget, so its descriptions are shortened and a warning is printed (on stderr), as a user would see it.`,
      ],
    });
  } finally {
    await cleanup();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await main(run);

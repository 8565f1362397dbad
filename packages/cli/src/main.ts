import { inspect } from "node:util";
import { parseInvocation } from "./args.ts";
import type { Invocation } from "./args.ts";
import { CliError } from "./cli-error.ts";
import { helpText } from "./help.ts";
import type { CliIo } from "./io.ts";
import { formatProblemLine, styleFor } from "./output.ts";
import { podVersion } from "./version.ts";

/** Exit status of `pod`: success, a problem in the user's files, wrong usage, a bug in pod. */
export const EXIT = { ok: 0, user: 1, usage: 2, internal: 70 } as const;

/** Runs `pod` with `argv` (without node and script) against `io`; resolves to the exit status. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await dispatch(parseInvocation(argv), io);
  } catch (error) {
    return report(error, io);
  }
}

// Command modules are imported on demand so `--help` and `--version` load none of them.
async function dispatch(invocation: Invocation, io: CliIo): Promise<number> {
  switch (invocation.command) {
    case "help":
      io.stdout.write(helpText(invocation.topic));
      return EXIT.ok;
    case "version":
      io.stdout.write(`${podVersion()}\n`);
      return EXIT.ok;
    case "prompt":
      return (await import("./commands/prompt.ts")).runPrompt(invocation.options, io);
    case "check":
      return (await import("./commands/check.ts")).runCheck(invocation.options, io);
    case "init":
      return (await import("./commands/init.ts")).runInit(invocation.options, io);
    case "run":
      return (await import("./commands/run.ts")).runRun(invocation.options, io);
    case "resume":
      return (await import("./commands/run.ts")).runResume(invocation.options, io);
    case "compact":
      return (await import("./commands/run.ts")).runCompact(invocation.options, io);
    case "log":
      return (await import("./commands/log.ts")).runLog(invocation.options, io);
    case "trust":
      return (await import("./commands/trust.ts")).runTrust(invocation.options, io);
  }
}

async function report(error: unknown, io: CliIo): Promise<number> {
  const style = styleFor(io.stderr, io.env);
  // A usage error happens before any package is loaded; keep it that way.
  if (CliError.is(error) && error.kind === "usage") {
    io.stderr.write(`pod: ${formatProblemLine({ code: error.code, message: error.message }, style)}\n`);
    return EXIT.usage;
  }
  // If the classifier itself cannot load (a broken install), the report must still get out.
  const classified = await import("./errors.ts").then(
    ({ classifyError }) => classifyError(error),
    () => ({ kind: "internal" }) as const,
  );
  if (classified.kind === "internal") {
    // inspect shows the stack and the cause chain, which a bug report needs.
    const { redacted } = await import("./shown-text.ts");
    const text = redacted(inspect(error, { depth: 6, colors: false }));
    io.stderr.write(`${text}\n${style.red("This is a bug in pod; please report it with the output above.")}\n`);
    return EXIT.internal;
  }
  io.stderr.write(`pod: ${formatProblemLine(classified.problem, style)}\n`);
  // Every value an untrusted workspace may not set, so one look at the manifest shows them all.
  for (const other of await untrustedSiblings(error)) io.stderr.write(`pod: ${formatProblemLine(other, style)}\n`);
  return classified.kind === "usage" ? EXIT.usage : EXIT.user;
}

/** The other UNTRUSTED_WORKSPACE problems of a refused manifest (the first is reported already). */
async function untrustedSiblings(error: unknown): Promise<import("./problem.ts").Problem[]> {
  const problems = (error as { code?: unknown; problems?: unknown }).problems;
  if ((error as { code?: unknown }).code !== "UNTRUSTED_WORKSPACE" || !Array.isArray(problems)) return [];
  const { problemFromUserError } = await import("./errors.ts");
  return problems.slice(1).map((problem) => problemFromUserError(problem));
}

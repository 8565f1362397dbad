import type { TurnEvent } from "@insomnia/worker";
import type { CliIo } from "./io.ts";
import type { Style } from "./output.ts";
import { forTerminal } from "./shown-text.ts";
import { StatusLine, secondsSince } from "./status-line.ts";

/** How `pod run` shows a turn as it happens. */
export interface LiveOutput {
  /** The turn's event handler. */
  onEvent(event: TurnEvent): void;
  /** Call before writing anything else to stderr: erases the status line. */
  beforeStderr(): void;
  /** The turn ended: erases the status line and ends the printed text with a newline. */
  finish(): void;
  /** True when some answer text was printed. */
  readonly printed: boolean;
}

/**
 * Prints a turn's text on stdout as it arrives (each delta written at once; a model call's text
 * after an earlier one's starts on a new line), its reasoning dimmed on stderr when asked, and
 * the status line on a terminal's stderr while the model is silent.
 */
export function liveOutput(
  io: CliIo,
  style: Style,
  options: { model: string; reasoning: boolean; maxAttempts: number },
): LiveOutput {
  const status = new StatusLine(io.stderr);
  let printed = false;
  let atLineStart = true;
  let reasoningOpen = false;
  const endReasoning = (): void => {
    if (reasoningOpen) io.stderr.write("\n");
    reasoningOpen = false;
  };
  return {
    get printed() {
      return printed;
    },
    onEvent(event) {
      switch (event.type) {
        case "model-call": {
          if (!atLineStart) {
            io.stdout.write("\n");
            atLineStart = true;
          }
          const start = Date.now();
          status.show(() => `waiting for ${options.model} ${secondsSince(start)}s`);
          break;
        }
        case "retry": {
          const until = Date.now() + event.delayMs;
          const attempt = `${event.attempt + 1}/${options.maxAttempts}`;
          // Once the back-off is over the next attempt is sent: the line says so, not "retrying in 0s".
          status.show(() =>
            Date.now() < until
              ? `retrying in ${Math.ceil((until - Date.now()) / 1000)}s (${attempt}): ${event.code}`
              : `waiting for ${options.model} ${secondsSince(until)}s (${attempt})`,
          );
          break;
        }
        case "text-delta":
          status.clear();
          endReasoning();
          // A model's escape sequences must not drive the user's terminal: shown visibly there, kept on a pipe.
          io.stdout.write(forTerminal(io.stdout, event.text));
          printed = true;
          atLineStart = event.text.endsWith("\n");
          break;
        case "reasoning-delta":
          if (!options.reasoning) break;
          status.clear();
          io.stderr.write(style.dim(forTerminal(io.stderr, event.text)));
          reasoningOpen = !event.text.endsWith("\n");
          break;
        default:
          status.clear();
          endReasoning();
      }
    },
    beforeStderr() {
      status.clear();
      endReasoning();
    },
    finish() {
      status.clear();
      endReasoning();
      if (!atLineStart) io.stdout.write("\n");
      atLineStart = true;
    },
  };
}

import * as path from "node:path";
import { BUILTIN_PROMPTS_DIR } from "./builtin-prompts-dir.ts";
import { PromptLoaderError } from "./prompt-loader-error.ts";
import { parseRef, type PromptPrefix, type PromptRef } from "./prompt-ref.ts";
import { userPromptsDir, workspacePromptsDir } from "./prompt-roots.ts";
import { sha256Hex } from "./sha256.ts";
import { readPromptFile } from "./read-prompt-file.ts";

/** Default cap on a prompt file's size: 1 MiB. */
export const DEFAULT_MAX_BYTES: number = 1024 * 1024;

/** Roots of the prefixes and the size cap; a prefix without a root cannot be loaded. */
export interface PromptLoaderOptions {
  /** Root for $user. */
  userDir?: string | undefined;
  /** Root for $workspace. */
  workspaceDir?: string | undefined;
  /**
   * Root for $app: an application's own prompt folder (a service's templates). Read under the
   * same rules as every root: no `..`, no absolute paths, symlinks may not leave it.
   */
  appDir?: string | undefined;
  /** Root for $insomnia; default BUILTIN_PROMPTS_DIR. */
  builtinDir?: string | undefined;
  /** Largest file accepted, in bytes; default 1 MiB. */
  maxBytes?: number | undefined;
}

/** Where a pod looks for prompts: its working directory and environment. */
export interface PodPromptOptions {
  cwd: string;
  /** Defaults to process.env. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /** The application's own prompt folder, the root of `$app` (none when absent). */
  appDir?: string | undefined;
}

/** A loaded prompt file. */
export interface LoadedPrompt {
  readonly ref: PromptRef;
  /** File text: BOM stripped, CRLF and lone CR turned into LF. */
  readonly text: string;
  /** Real path of the file read. */
  readonly file: string;
  /** Hex SHA-256 of `text`'s UTF-8 bytes (computed on first read of the property, then kept). */
  readonly sha256: string;
}

/** The constructor option that gives each prefix its root. */
const OPTION_OF: Readonly<Record<PromptPrefix, string>> = {
  $insomnia: "builtinDir",
  $user: "userDir",
  $workspace: "workspaceDir",
  $app: "appDir",
};

/** Turns prompt references into file text, never reading outside a prefix's root. */
export class PromptLoader {
  readonly maxBytes: number;
  readonly #roots: Readonly<Record<PromptPrefix, string | undefined>>;

  constructor(options: PromptLoaderOptions = {}) {
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    if (!Number.isSafeInteger(maxBytes) || maxBytes < 0) {
      throw new RangeError(`PromptLoader: maxBytes must be a non-negative integer, got ${String(maxBytes)}`);
    }
    this.maxBytes = maxBytes;
    const abs = (dir: string | undefined): string | undefined => (dir === undefined ? undefined : path.resolve(dir));
    this.#roots = {
      $insomnia: abs(options.builtinDir ?? BUILTIN_PROMPTS_DIR),
      $user: abs(options.userDir),
      $workspace: abs(options.workspaceDir),
      $app: abs(options.appDir),
    };
  }

  /** The standard roots: $XDG_CONFIG_HOME/insomnia/prompts (or ~/.config/...), <cwd>/.insomnia/prompts, and `appDir` when given. */
  static forPod(options: PodPromptOptions): PromptLoader {
    return new PromptLoader({
      userDir: userPromptsDir(options.env ?? process.env),
      workspaceDir: workspacePromptsDir(options.cwd),
      appDir: options.appDir,
    });
  }

  /** Root directory of a prefix, or undefined when not configured. */
  rootOf(prefix: PromptPrefix): string | undefined {
    return this.#roots[prefix];
  }

  /** Loads a reference (string refs are parsed with parseRef first, no `current`). */
  async load(ref: PromptRef | string): Promise<LoadedPrompt> {
    if (typeof ref !== "string" && (typeof ref !== "object" || ref === null)) {
      throw new PromptLoaderError(
        "INVALID_REF",
        `prompt reference must be a string or a PromptRef, got ${ref === null ? "null" : typeof ref}`,
      );
    }
    const written = typeof ref === "string" ? ref : `${ref.prefix}/${ref.path}`;
    // Re-parsed even when given a PromptRef: a hand-built object could carry "..".
    const parsed = parseRef(written);
    const root = this.rootOf(parsed.prefix);
    if (root === undefined) {
      throw new PromptLoaderError(
        "PREFIX_NOT_CONFIGURED",
        `no directory is configured for ${parsed.prefix}; pass ` +
          `${OPTION_OF[parsed.prefix]} ` +
          "to new PromptLoader(...) or use PromptLoader.forPod(...)",
        { ref: parsed.canonical },
      );
    }
    const file = `${path.join(root, ...parsed.path.split("/"))}.md`;
    const { text, file: realFile } = readPromptFile({ ref: written, root, file, maxBytes: this.maxBytes });
    return loadedPrompt(parsed, text, realFile);
  }
}

/** A LoadedPrompt whose hash is computed when first asked for: rendering never needs it. */
function loadedPrompt(ref: PromptRef, text: string, file: string): LoadedPrompt {
  let sha256: string | undefined;
  return Object.freeze(
    Object.defineProperties({} as LoadedPrompt, {
      ref: { value: ref, enumerable: true },
      text: { value: text, enumerable: true },
      file: { value: file, enumerable: true },
      sha256: { get: () => (sha256 ??= sha256Hex(text)), enumerable: true },
    }),
  );
}

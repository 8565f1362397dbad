import { frozenClone } from "./deep-freeze.ts";
import type { LlmCallOptions, LlmClient, LlmRequest, LlmResponse } from "./llm-client.ts";

/** The answers of a ScriptedLlmClient: a fixed list, or a function of (request, index, call options) that may stream. */
export type LlmScript =
  | readonly LlmResponse[]
  | ((request: LlmRequest, index: number, options: LlmCallOptions) => LlmResponse | Promise<LlmResponse>);

/** An LlmClient for tests: answers from a script and records every request it receives. */
export class ScriptedLlmClient implements LlmClient {
  readonly #script: LlmScript;
  readonly #requests: LlmRequest[] = [];

  constructor(script: LlmScript) {
    if (typeof script !== "function" && !Array.isArray(script)) {
      throw new TypeError("ScriptedLlmClient needs an array of responses or a function (request, index) => response");
    }
    this.#script = typeof script === "function" ? script : frozenClone(script);
  }

  /** Deep-frozen deep copies of every request received, oldest first. */
  get requests(): readonly LlmRequest[] {
    return Object.freeze([...this.#requests]);
  }

  /** Records the request and returns the next scripted response (a fresh copy). */
  async complete(request: LlmRequest, options: LlmCallOptions = {}): Promise<LlmResponse> {
    const index = this.#requests.length;
    const recorded = frozenClone(request);
    this.#requests.push(recorded);
    if (typeof this.#script === "function") return structuredClone(await this.#script(recorded, index, options));
    const response = this.#script[index];
    if (response === undefined) {
      const count = this.#script.length;
      throw new Error(
        `ScriptedLlmClient received request ${index + 1} but only ${count} response${count === 1 ? " was" : "s were"} scripted; add responses to the script`,
      );
    }
    return structuredClone(response);
  }
}

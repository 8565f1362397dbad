import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Scope } from "@insomnia/scope";
import { Worker } from "@insomnia/worker";
import { ScriptedLlmClient } from "@insomnia/worker/testing";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { type Box, makeBox } from "./__fixtures__/tree.ts";
import { changes, snapshot } from "./__fixtures__/watch.ts";
import { fsTools } from "./fs-tools.ts";

let box: Box;
beforeEach(() => {
  box = makeBox();
});
afterEach(() => box.remove());

describe("a worker with the file tools", () => {
  test("a_scripted_model_reads_edits_and_writes_inside_and_is_refused_outside", async () => {
    const repo = box.dir("repo");
    box.write("repo/src/app.ts", "export const greeting = 'hello';\n");
    box.write("secrets/key", "SECRET-KEY\n");
    const outsideBefore = snapshot(join(box.root, "secrets"));
    const call = (id: string, name: string, input: unknown) => ({ id, name, input });
    const client = new ScriptedLlmClient([
      {
        content: "",
        toolCalls: [
          call("1", "list_dir", { path: "." }),
          call("2", "read_file", { path: "src/app.ts" }),
          call("3", "edit_file", { path: "src/app.ts", old_string: "'hello'", new_string: "'hi'" }),
          call("4", "write_file", { path: "docs/NOTES.md", content: "# Notes\n" }),
          call("5", "read_file", { path: "../secrets/key" }),
          call("6", "write_file", { path: "../secrets/key", content: "pwned" }),
        ],
      },
      { content: "Done." },
    ]);
    const worker = new Worker({ client });
    for (const tool of fsTools(Scope.fromConfig({ allow: [{ target: ".", permission: "write" }] }, repo))) {
      worker.tools.register(tool);
    }
    worker.setSystemPrompt("You edit files.");
    const turn = await worker.run("Change the greeting and write notes.");

    expect(turn.final).toBe("Done.");
    const results = turn.messages.filter((m) => m.role === "tool");
    expect(results.map((m) => [m.toolCallId, m.isError === true])).toEqual([
      ["1", false],
      ["2", false],
      ["3", false],
      ["4", false],
      ["5", true],
      ["6", true],
    ]);
    expect(results[1]!.content).toBe("export const greeting = 'hello';\n");
    expect(results[4]!.content).toContain("outside the scope");
    expect(results.some((m) => m.content.includes("SECRET-KEY"))).toBe(false);
    // The tools the model was offered, sorted, as the prompt's {{tools}} lists them.
    expect(client.requests[0]!.tools.map((t) => t.name)).toEqual(["edit_file", "list_dir", "read_file", "write_file"]);
    expect(readFileSync(join(repo, "src/app.ts"), "utf8")).toBe("export const greeting = 'hi';\n");
    expect(readFileSync(join(repo, "docs/NOTES.md"), "utf8")).toBe("# Notes\n");
    expect([...snapshot(repo).keys()].sort()).toEqual(["", "docs", "docs/NOTES.md", "src", "src/app.ts"]);
    expect(changes(outsideBefore, snapshot(join(box.root, "secrets")))).toEqual([]);
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider } from "@insomnia/ai-sdk/testing";
import type { FakeProvider } from "@insomnia/ai-sdk/testing";
import { afterAll, afterEach, describe, expect, test } from "vitest";
import { runPodInProcess, useSandbox } from "../__fixtures__/sandbox.ts";

// Where bubblewrap is missing, run_command is not offered and pod check says why. A PATH with
// no bwrap on it is such a machine, whatever this one has installed.
const { box } = useSandbox();
const noBwrap = mkdtempSync(join(tmpdir(), "pod-no-bwrap-"));
afterAll(() => rmSync(noBwrap, { recursive: true, force: true }));
let fake: FakeProvider | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const HINT =
  "install bubblewrap (apt-get install bubblewrap, dnf install bubblewrap, pacman -S bubblewrap, apk add bubblewrap)";

describe("run_command where bubblewrap is missing", () => {
  test("pod_check_warns_sandbox_unavailable_at_worker_tools_and_exits_0", async () => {
    await box.write(".insomnia/pod.yaml", "worker:\n  tools: [read_file, run_command]\n");
    // Naming run_command widens what the pod may do: the user trusts this workspace first.
    expect((await runPodInProcess(["trust"], { cwd: box.ws, env: box.env })).code).toBe(0);
    const run = await runPodInProcess(["check"], { cwd: box.ws, env: { ...box.env, PATH: noBwrap } });
    expect(run.code).toBe(0);
    expect(run.stderr).toBe(
      `.insomnia/pod.yaml:2:10: warning: SANDBOX_UNAVAILABLE: bubblewrap (bwrap) is not installed; run_command is not offered (${HINT})\n`,
    );
    const json = await runPodInProcess(["check", "--json"], { cwd: box.ws, env: { ...box.env, PATH: noBwrap } });
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      problems: [{ code: "SANDBOX_UNAVAILABLE", severity: "warning" }],
    });
  });

  test("pod_check_says_nothing_of_the_sandbox_when_run_command_is_not_enabled", async () => {
    const run = await runPodInProcess(["check"], { cwd: box.ws, env: { ...box.env, PATH: noBwrap } });
    expect([run.code, run.stderr]).toEqual([0, ""]);
  });

  test("pod_run_does_not_offer_run_command_and_warns_why", async () => {
    fake = await startFakeProvider(() => ({ text: "done" }));
    await box.write(
      ".insomnia/pod.yaml",
      [
        "worker:",
        "  tools: [read_file, run_command]",
        "provider:",
        "  kind: anthropic",
        "  model: claude-sonnet-4-5",
        `  base_url: ${fake.baseURL}`,
        "",
      ].join("\n"),
    );
    const env = {
      ...box.env,
      PATH: noBwrap,
      XDG_STATE_HOME: join(box.home, "state"),
      ANTHROPIC_API_KEY: "sk-ant-test",
    };
    expect((await runPodInProcess(["trust"], { cwd: box.ws, env })).code).toBe(0);
    const run = await runPodInProcess(["run", "hello"], { cwd: box.ws, env });
    expect([run.code, run.stdout]).toEqual([0, "done\n"]);
    expect(run.stderr).toContain(
      `pod: warning: SANDBOX_UNAVAILABLE: bubblewrap (bwrap) is not installed; run_command is not offered (${HINT})\n`,
    );
    const tools = ((fake.requests[0]!.json as Record<string, unknown>).tools as { name: string }[]).map((t) => t.name);
    expect(tools).toEqual(["read_file"]);
  });
});

import { afterEach, describe, expect, it } from "vitest";
import { PromptLoader } from "./prompt-loader.ts";
import { PromptLoaderError } from "./prompt-loader-error.ts";
import { userPromptsDir } from "./prompt-roots.ts";

const realHome = process.env["HOME"];
afterEach(() => {
  if (realHome === undefined) delete process.env["HOME"];
  else process.env["HOME"] = realHome;
});

describe("userPromptsDir", () => {
  it("is_undefined_when_no_absolute_home_is_known", () => {
    // os.homedir() reads process.env.HOME: with a relative HOME everywhere, $user would
    // otherwise resolve to <cwd>/.config/insomnia/prompts, a directory a repository controls.
    process.env["HOME"] = ".";
    expect(userPromptsDir({ HOME: "." })).toBeUndefined();
    expect(userPromptsDir({ HOME: "" })).toBeUndefined();
    expect(userPromptsDir({ HOME: ".", XDG_CONFIG_HOME: "rel" })).toBeUndefined();
    expect(userPromptsDir({ HOME: ".", XDG_CONFIG_HOME: "/abs/xdg" })).toBe("/abs/xdg/insomnia/prompts");
  });

  it("user_prefix_is_not_configured_without_an_absolute_home", async () => {
    process.env["HOME"] = "relative-home";
    const loader = PromptLoader.forPod({ cwd: "/tmp", env: { HOME: "relative-home" } });
    expect(loader.rootOf("$user")).toBeUndefined();
    const error = await loader.load("$user/style").then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(PromptLoaderError.is(error) && error.code).toBe("PREFIX_NOT_CONFIGURED");
  });
});

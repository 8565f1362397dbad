import { describe, expect, test } from "vitest";
import { FetchHeaders } from "./fetch-headers.ts";

// The platform's Headers (undici's) is the oracle: FetchHeaders must answer as it does.
type Init = ConstructorParameters<typeof Headers>[0];

const INITS: Init[] = [
  undefined,
  {},
  { "Content-Type": "application/json", "X-Api-Key": " key\t", "anthropic-version": "2023-06-01" },
  [
    ["Accept", "a"],
    ["accept", "b"],
    ["Set-Cookie", "x=1"],
    ["set-cookie", "y=2"],
    ["user-agent", ""],
  ],
  new Headers({ b: "2", a: "1" }),
];

function view(headers: Headers | FetchHeaders) {
  return {
    entries: [...headers],
    keys: [...headers.keys()],
    values: [...headers.values()],
    each: (() => {
      const seen: string[][] = [];
      headers.forEach((value, name) => {
        seen.push([name, value]);
      });
      return seen;
    })(),
    get: ["accept", "ACCEPT", "set-cookie", "x-api-key", "missing"].map((name) => headers.get(name)),
    has: ["Accept", "user-agent", "missing"].map((name) => headers.has(name)),
    setCookie: headers.getSetCookie(),
    tag: Object.prototype.toString.call(headers),
  };
}

describe("FetchHeaders", () => {
  test("fetch_headers_answer_as_the_platform_headers", () => {
    for (const init of INITS) {
      const ours = new FetchHeaders(init as never);
      const platform = new Headers(init);
      expect(view(ours)).toEqual(view(platform));
      for (const headers of [ours, platform]) {
        headers.append("Accept", " c ");
        headers.set("X-New", "v");
        headers.delete("user-agent");
      }
      expect(view(ours)).toEqual(view(platform));
    }
  });

  test("invalid_names_and_values_throw_type_errors_as_the_platform_does", () => {
    const bad: [string, string][] = [
      ["bad name", "v"],
      ["", "v"],
      ["x(y)", "v"],
      ["ok", "a\r\nInjected: yes"],
      ["ok", "a\nb"],
      ["ok", "nul\0"],
      ["ok", "not a byte \u2019"],
    ];
    for (const [name, value] of bad) {
      expect(() => new Headers([[name, value]]), `${name}: ${value}`).toThrow(TypeError);
      expect(() => new FetchHeaders([[name, value]]), `${name}: ${value}`).toThrow(TypeError);
      expect(() => new FetchHeaders().set(name, value)).toThrow(TypeError);
    }
    expect(() => new FetchHeaders([["only-a-name"]] as never)).toThrow(TypeError);
    expect(() => new FetchHeaders("x" as never)).toThrow(TypeError);
  });

  test("any_headers_object_is_an_instance_and_nothing_else_is", () => {
    expect(new FetchHeaders() instanceof FetchHeaders).toBe(true);
    expect(new Headers() instanceof FetchHeaders).toBe(true);
    for (const other of [{}, [], null, "Headers", new Map()]) expect(other instanceof FetchHeaders).toBe(false);
  });
});

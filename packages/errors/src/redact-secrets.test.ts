import { describe, expect, test } from "vitest";
import { redactSecrets } from "./redact-secrets.ts";

describe("redactSecrets", () => {
  const table: [string, string, string][] = [
    ["user and password", "postgres://alice:S3cret@db.example/app", "postgres://***@db.example/app"],
    ["raw @ in the password", "postgres://alice:x@S3cret@host/db", "postgres://***@host/db"],
    ["two raw @ in the password", "postgresql://alice:a@b@c@host:5432/db", "postgresql://***@host:5432/db"],
    [
      "password query parameter",
      "postgres://host/db?sslmode=require&password=S3cret",
      "postgres://host/db?sslmode=require&password=***",
    ],
    ["Password parameter, any case", "postgres://host/db?PassWord=S3cret", "postgres://host/db?PassWord=***"],
    ["both at once", "postgres://alice:S3cret@host/db?password=Other1", "postgres://***@host/db?password=***"],
    ["IPv6 host", "postgres://alice:S3cret@[::1]:5432/db", "postgres://***@[::1]:5432/db"],
    ["IPv6 host, raw @", "postgres://alice:p@ss@[2001:db8::5]/db", "postgres://***@[2001:db8::5]/db"],
    ["user without password", "postgres://alice@host/db", "postgres://***@host/db"],
    ["token as the user of an https URL", "https://ghp_TOKEN123@github.com/o/r.git", "https://***@github.com/o/r.git"],
    ["no password at all", "postgres://host:5432/db?sslmode=require", "postgres://host:5432/db?sslmode=require"],
    [
      "an unparsable URL with a password",
      "postgres://alice:S3cret@host:notaport/db",
      "postgres://***@host:notaport/db",
    ],
    ["libpq key=value", "host=db user=alice password=S3cret dbname=app", "host=db user=alice password=*** dbname=app"],
    ["libpq quoted", "host=db password='S3 cr\\'et' dbname=app", "host=db password=*** dbname=app"],
    [
      "inside a sentence",
      "no conversation in postgres://alice:x@S3cret@host/db; start one",
      "no conversation in postgres://***@host/db; start one",
    ],
    [
      "before a semicolon",
      "in postgres://h/db?password=S3cret; start one",
      "in postgres://h/db?password=***; start one",
    ],
    ["in JSON", '{"store": "postgres://a:S3cret@h/db?password=P4ss"}', '{"store": "postgres://***@h/db?password=***"}'],
  ];
  for (const [name, input, expected] of table) {
    test(name, () => {
      const out = redactSecrets(input);
      expect(out).toBe(expected);
      expect(out).not.toMatch(/S3cret|S3 cr|P4ss|Other1|TOKEN123|p@ss|a@b/);
    });
  }

  test("text_without_secrets_is_unchanged_byte_for_byte", () => {
    for (const text of ["http://127.0.0.1:8080/v1", "https://Example.com", "see docs/security.md: 100% ok", ""])
      expect(redactSecrets(text)).toBe(text);
  });

  test("known_secrets_are_replaced_wherever_they_appear", () => {
    const body = '{"error":{"message":"invalid x-api-key sk-ant-api03-FAKE (sk-ant-api03-FAKE)"}}';
    expect(redactSecrets(body, ["sk-ant-api03-FAKE"])).toBe('{"error":{"message":"invalid x-api-key *** (***)"}}');
    // Tiny "secrets" are not searched for.
    expect(redactSecrets("a b c", ["a"])).toBe("a b c");
  });
});

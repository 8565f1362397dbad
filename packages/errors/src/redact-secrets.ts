/** What a secret is replaced by. */
export const REDACTED = "***";

// A URL with an authority: scheme "://" then anything up to whitespace, a quote or an angle bracket.
const URL_CANDIDATE = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'`<>]+/gi;
// libpq key=value connection strings (`host=db password=s3cret`), quoted or not; also `password=` in a URL query.
const PASSWORD_PAIR = /\b(password\s*=\s*)(?:'(?:[^'\\]|\\.)*'|[^\s'"&,;]+)/gi;
// Known secrets shorter than this are not searched for: replacing "ab" everywhere would garble text and hide nothing.
const MIN_SECRET_LENGTH = 4;

/**
 * `text` with every secret it holds replaced by `***`: all of the user-info of each URL
 * (found by the WHATWG URL parser, so a raw `@` in a password is the parser's business, not a
 * regular expression's), each `password` query parameter, each libpq `password=` pair, and each
 * of `secrets` (an API key, say) wherever it appears. Text without secrets is returned unchanged.
 */
export function redactSecrets(text: string, secrets: readonly string[] = []): string {
  let out = text.replace(URL_CANDIDATE, redactUrl);
  out = out.replace(PASSWORD_PAIR, (_match, key: string) => `${key}${REDACTED}`);
  const known = secrets.filter((secret) => secret.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  for (const secret of known) out = out.split(secret).join(REDACTED);
  return out;
}

/** One URL with its user-info and `password` parameters replaced; unchanged (byte for byte) when it has neither. */
function redactUrl(found: string): string {
  // Punctuation that ends a sentence ends the URL: "…/db; start one" keeps its "; ".
  const trailing = /[.,;:!?)]+$/.exec(found)?.[0] ?? "";
  const candidate = found.slice(0, found.length - trailing.length);
  return redactParsed(candidate) + trailing;
}

function redactParsed(candidate: string): string {
  let url: URL;
  try {
    url = new URL(candidate);
  } catch {
    return redactUnparsed(candidate);
  }
  const passwords = [...url.searchParams.keys()].filter((key) => key.toLowerCase() === "password");
  if (url.username === "" && url.password === "" && passwords.length === 0) return candidate;
  if (url.username !== "" || url.password !== "") {
    url.password = "";
    url.username = REDACTED;
  }
  for (const key of passwords) url.searchParams.set(key, REDACTED);
  // The setters percent-encode `*`; show the marker as written.
  return url.href.replaceAll("%2A%2A%2A", REDACTED);
}

/**
 * A URL the parser rejects (a bad port, say) may still carry a password: everything between
 * `://` and the last `@` before the path is dropped, as the parser would have read it.
 */
function redactUnparsed(candidate: string): string {
  const start = candidate.indexOf("://") + 3;
  const rest = candidate.slice(start);
  const end = rest.search(/[/?#]/);
  const authority = end === -1 ? rest : rest.slice(0, end);
  const at = authority.lastIndexOf("@");
  if (at === -1) return candidate;
  return `${candidate.slice(0, start)}${REDACTED}${rest.slice(at)}`;
}

/**
 * Takes credentials out of a message before anyone sees or stores it. Provider errors quote what servers and
 * libraries said, and both repeat secrets: a 401 body that echoes the key it refused, a transport error that names
 * the URL with its `user:password@`. Such a message goes to stderr, the JSON and RPC streams and the session file,
 * so the AssistantMessageWriter passes every error message through `redactSecrets` when it creates the error.
 *
 * Removed: URL userinfo, the values of `Authorization` and of fields or headers whose name ends in "key" (`apiKey`,
 * `x-api-key`, `api_key`), "token", "secret" or "password", `sk-…` style keys, and every secret the caller names
 * (the configured key, header values, the baseUrl's password), wherever it appears.
 */

export const REDACTED = "[redacted]";

/** A configured secret shorter than this is not searched for in text: it would match ordinary words. */
const MIN_SECRET_LENGTH = 8;

const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;
/**
 * `name: value`, `name=value`, `"name": "value"` for credential-like names: `apiKey`, `x-api-key`, `access_token`,
 * `client_secret`, `password`, `Authorization` (a bare "key:" or "token:" is prose: "No key: set FAKE_KEY"). The
 * scheme word of an Authorization value stays; a value already redacted is left alone.
 */
const FIELD =
  /(\b(?:[\w.-]+(?:key|token|secret)|[\w.-]*(?:password|authorization))["']?\s*[:=]\s*)((?:bearer|basic|token)\s+)?(?!\[redacted\])("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s"',;&}\]]+)/gi;
const KEY_SHAPED = /\b(?:sk|rk|pk)-[A-Za-z0-9_-]{16,}/g;

/** `text` without credentials. `secrets`: literal values to remove as well (short and empty ones are ignored). */
export function redactSecrets(text: string, secrets: Iterable<string | undefined> = []): string {
  let result = text;
  // Longest first, so a secret that contains another is removed whole.
  const literal = [...new Set(secrets)]
    .filter((secret): secret is string => typeof secret === "string" && secret.length >= MIN_SECRET_LENGTH)
    .sort((a, b) => b.length - a.length);
  for (const secret of literal) {
    if (result.includes(secret)) result = result.split(secret).join(REDACTED);
  }
  return result
    .replace(USERINFO, `$1${REDACTED}@`)
    .replace(FIELD, (match: string, name: string, scheme: string | undefined, value: string) => {
      // `Authorization: Bearer [redacted]`: the scheme word alone is no secret.
      if (!scheme && /^(bearer|basic|token)$/i.test(value)) return match;
      const quote = value[0] === '"' || value[0] === "'" ? value[0] : "";
      return `${name}${scheme ?? ""}${quote}${REDACTED}${quote}`;
    })
    .replace(KEY_SHAPED, REDACTED);
}

/**
 * The secrets of a provider request: its key, the values of credential-like headers, and the user name and
 * password of its baseUrl (decoded, as a server would repeat them).
 */
export function requestSecrets(request: {
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
  headers?: Record<string, string> | undefined;
}): string[] {
  const secrets: string[] = [];
  if (request.apiKey) secrets.push(request.apiKey);
  for (const [name, value] of Object.entries(request.headers ?? {})) {
    if (typeof value !== "string" || !/(key|token|secret|password|authorization|cookie)$/i.test(name))
      continue;
    secrets.push(value, value.replace(/^(bearer|basic|token)\s+/i, ""));
  }
  if (request.baseUrl && URL.canParse(request.baseUrl)) {
    const url = new URL(request.baseUrl);
    for (const part of [url.username, url.password]) {
      if (!part) continue;
      secrets.push(part);
      try {
        secrets.push(decodeURIComponent(part));
      } catch {
        // a malformed escape: the raw form is enough
      }
    }
  }
  return secrets;
}

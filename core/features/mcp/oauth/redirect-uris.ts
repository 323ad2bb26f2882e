/**
 * Redirect URIs a client may register (MCP authorization spec; OAuth 2.1 section 2.3.1 and 7.5.3): absolute
 * https URLs, or http only on a loopback host (native apps listen on 127.0.0.1 / [::1] / localhost). No
 * fragment, no wildcard, no user info. Later requests must name one of them exactly (byte for byte).
 */

export const MAX_REDIRECT_URIS = 10;
const MAX_REDIRECT_URI_LENGTH = 2000;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "[::1]", "localhost"]);

/** Why `value` cannot be a redirect URI, or undefined when it can. */
export function redirectUriProblem(value: unknown): string | undefined {
  if (typeof value !== "string" || value === "") return "must be a non-empty string";
  if (value.length > MAX_REDIRECT_URI_LENGTH) return `is longer than ${MAX_REDIRECT_URI_LENGTH} characters`;
  if (/[\s\\]/.test(value) || [...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)) {
    return "contains whitespace, control characters or backslashes";
  }
  if (value.includes("*")) return "contains a wildcard";
  if (value.includes("#")) return "has a fragment";
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "is not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return "must use https (or http on a loopback host)";
  // `new URL` also accepts `https:example.com`; insist on the `scheme://` form the client will be sent to.
  if (!value.toLowerCase().startsWith(`${url.protocol}//`)) return "is not an absolute URL";
  if (url.username || url.password) return "has user information";
  if (url.protocol === "https:") return url.hostname ? undefined : "has no host";
  return LOOPBACK_HOSTS.has(url.hostname) ? undefined : "uses http on a host that is not loopback";
}

/** The first problem of a client's `redirect_uris`, as an error description, or undefined when all are fine. */
export function redirectUrisProblem(value: unknown): string | undefined {
  if (!Array.isArray(value) || value.length === 0) return "'redirect_uris' must be a non-empty array of URLs.";
  if (value.length > MAX_REDIRECT_URIS) return `'redirect_uris' may hold at most ${MAX_REDIRECT_URIS} URLs.`;
  for (const [index, uri] of value.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) return `'redirect_uris[${index}]' ${problem}.`;
  }
  return undefined;
}

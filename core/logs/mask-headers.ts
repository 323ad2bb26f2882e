import { createHash } from "node:crypto";

/**
 * Request headers as they may be logged: credentials are masked, headers the caller declared sensitive
 * (`x-gateway-sensitive-headers`) are replaced by a hash (so equal values can still be correlated), and the
 * deployment's ORGANISATION_HEADERS_TO_MASK are masked. Secrets never reach a log.
 */
const CREDENTIAL_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "api-key",
  "x-api-key",
  "x-goog-api-key",
  "x-gateway-api-key",
  "x-portkey-api-key",
  "x-gateway-virtual-key",
  "x-portkey-virtual-key",
]);
const CREDENTIAL_PATTERN = /(secret|session-token|password|service-account|private-key|access-key|token$|api-key$)/i;
export const MASK = "********";

export function maskHeaders(
  headers: Headers,
  options: { sensitive?: string[]; organisationMasked?: string[] } = {},
): Record<string, string> {
  const sensitive = new Set((options.sensitive ?? []).map((name) => name.toLowerCase()));
  const masked = new Set((options.organisationMasked ?? []).map((name) => name.toLowerCase()));
  const out: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (CREDENTIAL_HEADERS.has(name) || CREDENTIAL_PATTERN.test(name) || masked.has(name)) out[name] = MASK;
    else if (sensitive.has(name)) out[name] = `sha256:${createHash("sha256").update(value).digest("hex").slice(0, 16)}`;
    else out[name] = value;
  });
  return out;
}

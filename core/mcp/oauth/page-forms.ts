/**
 * Whether a form POST comes from the gateway's own OAuth pages (sign-in, consent), as the browser says it: the
 * defence against cross-site form posts next to the CSRF token. A browser names where a form was submitted from
 * in `Origin` (the pages' `Referrer-Policy: same-origin` lets it send the origin itself, where `no-referrer` makes
 * it `null`) and, over https and on localhost, in `Sec-Fetch-Site`, which page scripts cannot set. So: an
 * `Origin` must be the gateway's; without one (or `null`), `Sec-Fetch-Site` must say `same-origin`. A request
 * that carries neither is not a browser's form and is refused.
 */
export function isSameOriginForm(headers: Headers, gatewayOrigin: string): boolean {
  const origin = headers.get("origin");
  if (origin !== null && origin !== "null") return origin === gatewayOrigin;
  return headers.get("sec-fetch-site") === "same-origin";
}

import { createHash } from "node:crypto";
import { type TransformContext, UpstreamError } from "../types.ts";
import { NO_TRUSTED_HOSTS, type TrustedHosts, isTrustedHost } from "../../security/custom-host.ts";
import { guardedFetch } from "../../security/guarded-dispatcher.ts";
import { TtlCache } from "../../util/ttl-cache.ts";

/**
 * Vertex AI access tokens: either given (the target's apiKey is already an OAuth access token) or exchanged from a
 * service-account key with the OAuth 2.0 JWT-bearer grant (RFC 7523): an RS256 assertion signed with the key's
 * private key, posted to the key's token_uri.
 */

export const CLOUD_PLATFORM_SCOPE = "https://www.googleapis.com/auth/cloud-platform";
export const DEFAULT_TOKEN_URI = "https://oauth2.googleapis.com/token";
const JWT_BEARER_GRANT = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const ASSERTION_LIFETIME_SECONDS = 3600;
/** Google's own token hosts; others only when listed in TRUSTED_CUSTOM_HOSTS (tests, private proxies). */
const TOKEN_HOSTS = new Set(["oauth2.googleapis.com", "www.googleapis.com"]);
/** Tokens are dropped this long before they expire (at most half their lifetime). */
const REFRESH_MARGIN_SECONDS = 300;
const MAX_CACHED_TOKENS = 256;
const EXCHANGE_TIMEOUT_MS = 30_000;

export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
  token_uri: string;
  project_id?: string;
}

/**
 * Access tokens keyed by a hash of the whole credential (email, private key and token URI), never by the email alone:
 * otherwise a caller who knows a service account's email could be handed its token with a made-up key.
 * Each lives until shortly before it expires (set per entry).
 */
const tokens = new TtlCache<string, string>({
  ttlMs: 0,
  maxEntries: MAX_CACHED_TOKENS,
  sizeOf: (hash, token) => 96 + (hash.length + token.length) * 2,
});
const pending = new Map<string, Promise<string>>();

/** Tests start from an empty cache. */
export function clearVertexTokenCache(): void {
  tokens.clear();
  pending.clear();
}

export function parseServiceAccount(json: string): ServiceAccountKey {
  let parsed: any;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw credentialError("The Vertex AI service account key is not valid JSON");
  }
  if (typeof parsed?.client_email !== "string" || typeof parsed?.private_key !== "string") {
    throw credentialError("The Vertex AI service account key needs client_email and private_key");
  }
  return {
    client_email: parsed.client_email,
    private_key: parsed.private_key,
    private_key_id: typeof parsed.private_key_id === "string" ? parsed.private_key_id : undefined,
    token_uri: typeof parsed.token_uri === "string" && parsed.token_uri ? parsed.token_uri : DEFAULT_TOKEN_URI,
    project_id: typeof parsed.project_id === "string" ? parsed.project_id : undefined,
  };
}

/** SSRF guard for the token endpoint named inside a caller-supplied key: Google's hosts, or TRUSTED_CUSTOM_HOSTS. */
export function checkTokenUri(tokenUri: string, trusted?: TrustedHosts): URL {
  let url: URL;
  try {
    url = new URL(tokenUri);
  } catch {
    throw credentialError("The service account token_uri is not a URL");
  }
  const host = url.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  if (trusted && isTrustedHost(host, trusted) && (url.protocol === "https:" || url.protocol === "http:")) return url;
  if (TOKEN_HOSTS.has(host) && url.protocol === "https:" && !url.username && !url.password) return url;
  throw new UpstreamError(400, `The service account token_uri host ${JSON.stringify(url.host)} is not allowed`, {
    type: "invalid_request_error",
    code: "forbidden_token_uri",
  });
}

/** The bearer token for a Vertex request: the service account's (exchanged, cached) or the given access token. */
export async function vertexAccessToken(
  ctx: Pick<TransformContext, "target" | "fetch" | "signal" | "trustedHosts">,
): Promise<string> {
  const json = ctx.target.vertex?.serviceAccountJson;
  if (json) return serviceAccountToken(parseServiceAccount(json), ctx);
  if (ctx.target.apiKey) return ctx.target.apiKey;
  throw credentialError("Vertex AI needs a service account key or an access token");
}

export async function serviceAccountToken(
  key: ServiceAccountKey,
  ctx: Pick<TransformContext, "fetch" | "signal" | "trustedHosts">,
): Promise<string> {
  const tokenUrl = checkTokenUri(key.token_uri, ctx.trustedHosts);
  const cacheKey = createHash("sha256")
    .update(JSON.stringify([key.client_email, key.private_key, tokenUrl.href]))
    .digest("base64url");
  const cached = tokens.get(cacheKey);
  if (cached !== undefined) return cached;

  // Concurrent requests share one exchange; it is not tied to any one request's signal, each waits on its own.
  let exchange = pending.get(cacheKey);
  if (!exchange) {
    exchange = exchangeToken(key, tokenUrl, ctx.fetch ?? guardedFetch(ctx.trustedHosts ?? NO_TRUSTED_HOSTS))
      .then(({ token, expiresIn }) => {
        const margin = Math.min(REFRESH_MARGIN_SECONDS, expiresIn / 2);
        tokens.set(cacheKey, token, (expiresIn - margin) * 1000);
        return token;
      })
      .finally(() => pending.delete(cacheKey));
    pending.set(cacheKey, exchange);
  }
  return untilAborted(exchange, ctx.signal);
}

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** The signed JWT-bearer assertion for a key. */
export async function buildAssertion(key: ServiceAccountKey, audience: string, nowSeconds: number): Promise<string> {
  // jose is loaded by the first token exchange (cached for an hour), not at every cold start.
  const { importPKCS8, SignJWT } = await import("jose");
  let privateKey: CryptoKey;
  try {
    privateKey = await importPKCS8(key.private_key, "RS256");
  } catch {
    throw credentialError("The service account private_key is not a PKCS#8 PEM RSA key");
  }
  const header: { alg: "RS256"; typ: "JWT"; kid?: string } = { alg: "RS256", typ: "JWT" };
  if (key.private_key_id) header.kid = key.private_key_id;
  return new SignJWT({ scope: CLOUD_PLATFORM_SCOPE })
    .setProtectedHeader(header)
    .setIssuer(key.client_email)
    .setAudience(audience)
    .setIssuedAt(nowSeconds)
    .setExpirationTime(nowSeconds + ASSERTION_LIFETIME_SECONDS)
    .sign(privateKey);
}

async function exchangeToken(
  key: ServiceAccountKey,
  tokenUrl: URL,
  doFetch: typeof fetch,
): Promise<{ token: string; expiresIn: number }> {
  const assertion = await buildAssertion(key, key.token_uri, Math.floor(Date.now() / 1000));
  let response: Response;
  try {
    response = await doFetch(tokenUrl.href, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: new URLSearchParams({ grant_type: JWT_BEARER_GRANT, assertion }).toString(),
      redirect: "error",
      signal: AbortSignal.timeout(EXCHANGE_TIMEOUT_MS),
    });
  } catch (error) {
    throw new UpstreamError(502, `The Vertex AI token exchange failed: ${(error as Error).message}`, {
      type: "server_error",
    });
  }
  const text = await response.text();
  let body: any;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    const reason = body?.error_description ?? body?.error ?? `status ${response.status}`;
    const status = response.status >= 500 ? 502 : 401;
    throw new UpstreamError(status, `The Vertex AI token exchange was refused: ${String(reason).slice(0, 300)}`, {
      type: status === 401 ? "authentication_error" : "server_error",
      code: typeof body?.error === "string" ? body.error : null,
    });
  }
  if (typeof body?.access_token !== "string" || !body.access_token) {
    throw new UpstreamError(502, "The Vertex AI token endpoint answered without an access_token", {
      type: "server_error",
    });
  }
  const expiresIn = Number(body.expires_in);
  return { token: body.access_token, expiresIn: Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 3600 };
}

function credentialError(message: string): UpstreamError {
  return new UpstreamError(401, message, { type: "authentication_error", code: "invalid_credentials" });
}

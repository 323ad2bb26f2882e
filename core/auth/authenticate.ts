import { gatewayHeader } from "../http/gateway-headers.ts";
import { HttpError, unauthorized } from "../http/errors.ts";
import type { HeaderSource } from "../http/request-headers.ts";
import type { Services } from "../services.ts";
import {
  SESSION_COOKIE,
  SessionError,
  type SessionRequest,
  authenticateSession,
  readCookie,
} from "../identity/sso/sessions.ts";
import { looksLikeJwt } from "./jwt.ts";
import type { Principal } from "./principal.ts";

/**
 * Authenticates a request: by its gateway API key (`x-gateway-api-key`, alias `x-portkey-api-key`), else by
 * a bearer JWT. On inference routes `Authorization` normally carries the provider's key, so it is read as a
 * JWT only when no gateway key is sent, JWT auth is configured and the token is a well-formed JWT. Last, an SSO
 * session cookie, for callers that pass the request's method and the gateway's origin (CSRF check).
 */
export async function authenticate(
  headers: HeaderSource,
  services: Services,
  request?: Pick<Request, "method" | "url">,
): Promise<Principal> {
  const apiKey = gatewayHeader(headers, "api-key");
  if (apiKey) return services.apiKeys.authenticate(apiKey);
  const token = bearerJwt(headers, services);
  if (token) return services.jwt.authenticate(token);
  // An SSO session cookie (core/identity/sso/sessions.ts), when the caller gives what its CSRF check needs.
  const sessionId = request && readCookie(headers.get("cookie"), SESSION_COOKIE);
  if (sessionId) return sessionPrincipal(sessionId, headers, services, request!);
  throw unauthorized("Missing API key. Send your gateway API key in the x-gateway-api-key header.");
}

/** The bearer token when it is to be read as a JWT (see authenticate). */
export function bearerJwt(headers: HeaderSource, services: Services): string | undefined {
  if (!services.jwt?.enabled) return undefined;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "");
  return match && looksLikeJwt(match[1]!) ? match[1] : undefined;
}

async function sessionPrincipal(
  sessionId: string,
  headers: HeaderSource,
  services: Services,
  request: Pick<Request, "method" | "url">,
): Promise<Principal> {
  const publicUrl = services.settings.GATEWAY_PUBLIC_URL;
  const check: SessionRequest = { method: request.method, origin: new URL(publicUrl ?? request.url).origin, headers };
  try {
    return await authenticateSession(services.stores.records, sessionId, check);
  } catch (error) {
    if (!(error instanceof SessionError)) throw error;
    throw new HttpError(error.code === "csrf_failed" ? 403 : 401, error.message, { code: error.code });
  }
}

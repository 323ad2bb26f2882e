import { authenticate, bearerJwt } from "../../../auth/authenticate.ts";
import type { Principal } from "../../../auth/principal.ts";
import { gatewayHeader } from "../../../http/gateway-headers.ts";
import { HttpError, forbidden } from "../../../http/errors.ts";
import type { Services } from "../../../services.ts";
import { authenticateMcpBearer } from "../oauth/bearer.ts";
import { ACCESS_TOKEN_PREFIX } from "../oauth/tokens.ts";

/**
 * Who calls the MCP endpoint. MCP clients can usually only set `Authorization`, so besides the gateway's own
 * ways (`x-gateway-api-key`, a bearer JWT) a bearer token is read as an access token of the gateway's OAuth
 * server (`gwoat_...`), else as a gateway API key (on this route `Authorization` never carries a provider key). A missing or refused credential answers 401 with
 * the `WWW-Authenticate` challenge MCP clients follow to the protected-resource metadata (RFC 9728).
 */
export async function authenticateMcpCaller(
  request: Request,
  services: Services,
  serverRef: string,
): Promise<Principal> {
  const headers = request.headers;
  try {
    if (gatewayHeader(headers, "api-key") || bearerJwt(headers, services)) {
      return await authenticate(headers, services);
    }
    const bearer = /^Bearer\s+(\S+)\s*$/i.exec(headers.get("authorization") ?? "")?.[1];
    if (bearer) {
      // An access token of the gateway's own OAuth server (core/features/mcp/oauth), checked against this resource; its
      // refusals carry their own `invalid_token` challenge.
      if (bearer.startsWith(ACCESS_TOKEN_PREFIX)) {
        return await authenticateMcpBearer(bearer, services, mcpResourceUrl(request, services, serverRef));
      }
      return await services.apiKeys.authenticate(bearer);
    }
  } catch (error) {
    if (error instanceof HttpError && error.status === 401) {
      if (error.headers["www-authenticate"]) throw error;
      throw challenge(request, services, serverRef, error.message);
    }
    throw error;
  }
  throw challenge(
    request,
    services,
    serverRef,
    "Missing credentials. Send your gateway API key in x-gateway-api-key or Authorization: Bearer.",
  );
}

/** The gateway's public base URL: GATEWAY_PUBLIC_URL, else the request's origin. */
export function publicBase(request: Request, services: Services): string {
  return (services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin).replace(/\/+$/, "");
}

/** The URL MCP clients know this server by (the OAuth resource indicator). */
export const mcpResourceUrl = (request: Request, services: Services, serverRef: string) =>
  `${publicBase(request, services)}/mcp/${encodeURIComponent(serverRef)}`;

function challenge(request: Request, services: Services, serverRef: string, message: string): HttpError {
  const metadata = `${publicBase(request, services)}/.well-known/oauth-protected-resource/mcp/${encodeURIComponent(serverRef)}`;
  return new HttpError(401, message, {
    code: "invalid_api_key",
    headers: { "www-authenticate": `Bearer resource_metadata="${metadata}"` },
  });
}

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * DNS-rebinding protection (MCP transport security): a browser request (it has an Origin) is served only from
 * the gateway's public origin, a loopback origin or one of MCP_ALLOWED_ORIGINS. Host cannot be trusted here: a
 * rebound name sends the attacker's own Host.
 */
export function checkOrigin(request: Request, services: Services): void {
  const origin = request.headers.get("origin");
  if (!origin) return;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    throw forbidden("The request's Origin is not allowed to call this MCP server.", "origin_not_allowed");
  }
  const allowed = services.settings.MCP_ALLOWED_ORIGINS;
  const publicUrl = services.settings.GATEWAY_PUBLIC_URL;
  if (LOOPBACK_HOSTS.has(parsed.hostname)) return;
  if (publicUrl && new URL(publicUrl).origin === parsed.origin) return;
  if (allowed.includes(parsed.origin) || allowed.includes("*")) return;
  throw forbidden("The request's Origin is not allowed to call this MCP server.", "origin_not_allowed");
}

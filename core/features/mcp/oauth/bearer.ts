import type { Principal } from "../../../auth/principal.ts";
import { HttpError } from "../../../http/errors.ts";
import type { Services } from "../../../services.ts";
import { currentPrincipal } from "./grant-subject.ts";
import { ACCESS_TOKEN_PREFIX, findLiveToken } from "./tokens.ts";

/**
 * Bearer authentication of the MCP endpoint with the gateway's own OAuth access tokens (never any other route:
 * core/auth/authenticate.ts does not know them). A token is accepted for `resource` when it was granted for that
 * resource URL, for the same MCP server under another of its names (id or slug), or with no audience (granted
 * without `resource`, or for the gateway's base URL). Anything else answers 401 with `error="invalid_token"` (RFC 6750 section 3.1).
 */
export async function authenticateMcpBearer(token: string, services: Services, resource: string): Promise<Principal> {
  const records = services.stores.records;
  if (!token.startsWith(ACCESS_TOKEN_PREFIX)) throw invalidToken(resource, "Not an access token of this gateway.");
  const stored = await findLiveToken(records, token);
  if (stored?.kind !== "access") throw invalidToken(resource, "The access token is unknown, expired or revoked.");
  if (!(await audienceMatches(services, stored.resource, stored.serverId, resource))) {
    throw invalidToken(resource, "The access token was granted for another resource.");
  }
  const principal = await currentPrincipal(records, stored.subject);
  if (!principal) throw invalidToken(resource, "The identity behind the access token no longer holds.");
  return principal;
}

async function audienceMatches(
  services: Services,
  audience: string | undefined,
  serverId: string | undefined,
  resource: string,
): Promise<boolean> {
  if (audience === undefined || audience === resource) return true;
  const { origin, pathname } = safeUrl(resource) ?? {};
  if (!serverId || !pathname) return false;
  const match = /^\/mcp\/([^/]+)\/?$/.exec(pathname);
  if (!match || safeUrl(audience)?.origin !== origin) return false;
  const { findMcpServer } = await import("./resources.ts");
  let ref: string;
  try {
    ref = decodeURIComponent(match[1]!);
  } catch {
    return false;
  }
  const server = await findMcpServer(services.stores.records, ref);
  return server?.id === serverId;
}

function safeUrl(value: string): URL | undefined {
  try {
    return new URL(value);
  } catch {
    return undefined;
  }
}

function invalidToken(resource: string, description: string): HttpError {
  const url = safeUrl(resource);
  const metadata = url ? `${url.origin}/.well-known/oauth-protected-resource${url.pathname.replace(/\/$/, "")}` : "";
  const challenge = [
    'Bearer error="invalid_token"',
    `error_description="${description}"`,
    ...(metadata ? [`resource_metadata="${metadata}"`] : []),
  ].join(", ");
  return new HttpError(401, description, { code: "invalid_token", headers: { "www-authenticate": challenge } });
}

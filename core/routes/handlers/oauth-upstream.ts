import type { Principal } from "../../auth/principal.ts";
import { DomainError } from "../../control/errors.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { HttpError, unauthorized } from "../../http/errors.ts";
import { gatewayHeader } from "../../http/gateway-headers.ts";
import { httpErrorOf } from "../../http/domain-errors.ts";
import { donePage, errorPage } from "../../features/mcp/oauth/pages.ts";
import { publicBase } from "../../features/mcp/oauth/resources.ts";
import { finishConnect, startConnect } from "../../features/mcp/upstream/oauth-connect.ts";
import { SESSION_COOKIE, SessionError, authenticateSession, readCookie } from "../../identity/sso/sessions.ts";

/**
 * Per-user OAuth to upstream MCP servers (core/features/mcp/upstream/oauth-connect.ts): `GET /oauth/upstream/:server/connect`
 * (a signed-in user: the SSO session cookie, or a user API key) redirects to the upstream's authorize page;
 * `GET /oauth/upstream/callback` finishes and shows a page.
 */

/** The user behind the request: a user API key, else the SSO session cookie (a GET: no CSRF state change). */
async function userPrincipal(request: Request, ctx: RequestContext): Promise<Principal> {
  const apiKey = gatewayHeader(request.headers, "api-key");
  if (apiKey) return ctx.services.apiKeys.authenticate(apiKey);
  const sessionId = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
  if (!sessionId) throw unauthorized("Sign in first (SSO), or send a user API key in x-gateway-api-key.");
  const origin = new URL(publicBase(request, ctx.services.settings)).origin;
  try {
    return await authenticateSession(ctx.services.stores.records, sessionId, {
      method: "GET",
      origin,
      headers: request.headers,
    });
  } catch (error) {
    if (error instanceof SessionError) throw new HttpError(401, error.message, { code: error.code });
    throw error;
  }
}

export const upstreamHandlers: HandlerMap = {
  async upstreamConnect(request, ctx) {
    const principal = await userPrincipal(request, ctx);
    const url = await startConnect(
      ctx.services,
      principal,
      ctx.params.server!,
      publicBase(request, ctx.services.settings),
    );
    return new Response(null, {
      status: 302,
      headers: { location: url.href, "cache-control": "no-store", "referrer-policy": "no-referrer" },
    });
  },

  async upstreamCallback(request, ctx) {
    try {
      const { server } = await finishConnect(
        ctx.services,
        new URL(request.url).searchParams,
        publicBase(request, ctx.services.settings),
        ctx.traceId,
      );
      return donePage("Connected", `You are connected to MCP server “${server.name}”. You can close this window.`);
    } catch (error) {
      const http = error instanceof DomainError ? httpErrorOf(error) : error instanceof HttpError ? error : undefined;
      if (!http) throw error;
      return errorPage(http.message, http.status);
    }
  },
};

import type { Principal } from "../../auth/principal.ts";
import { recordAudit } from "../../control/audit.ts";
import { DomainError } from "../../control/errors.ts";
import {
  type AuthorizeStep,
  type PendingForm,
  decideConsent,
  deploymentOrganisation,
  refuseSignIn,
  signInWithApiKey,
  startAuthorization,
  subjectPrincipal,
} from "../../features/mcp/oauth/authorize.ts";
import {
  authenticateClient,
  parseClientMetadata,
  presentClient,
  presentedClient,
  registerClient,
} from "../../features/mcp/oauth/clients.ts";
import { type Introspector, introspect, requireAdminIntrospector } from "../../features/mcp/oauth/introspection.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "../../features/mcp/oauth/metadata.ts";
import { OAuthError, answerOAuth, oauthJson } from "../../features/mcp/oauth/oauth-errors.ts";
import { isSameOriginForm } from "../../features/mcp/oauth/page-forms.ts";
import { consentPage, donePage, errorPage, signInPage } from "../../features/mcp/oauth/pages.ts";
import { findAuthorizationRequest } from "../../features/mcp/oauth/pending-requests.ts";
import { admitRegistration } from "../../features/mcp/oauth/registration-limit.ts";
import { findMcpServer, publicBase, resourceUrl } from "../../features/mcp/oauth/resources.ts";
import { revokeToken } from "../../features/mcp/oauth/revocation.ts";
import { exchangeToken } from "../../features/mcp/oauth/token-endpoint.ts";
import { finishConnect, startConnect } from "../../features/mcp/upstream/oauth-connect.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { httpErrorOf } from "../../http/domain-errors.ts";
import { HttpError, notFound, unauthorized } from "../../http/errors.ts";
import { gatewayHeader } from "../../http/gateway-headers.ts";
import { readJson, readText } from "../../http/json.ts";
import { SESSION_COOKIE, SessionError, authenticateSession, readCookie } from "../../identity/sso/sessions.ts";

/**
 * The gateway as an OAuth 2.1 authorization server for MCP clients (core/features/mcp/oauth; docs/mcp-oauth.md):
 * discovery (RFC 8414, RFC 9728), dynamic client registration (RFC 7591), the authorize pages (sign-in with SSO or
 * an API key, then consent: the flow is core/features/mcp/oauth/authorize.ts), the token endpoint, introspection
 * (RFC 7662) and revocation (RFC 7009). Its tokens open only the MCP endpoint (core/features/mcp/oauth/bearer.ts).
 * Per-user OAuth to upstream MCP servers: upstreamConnect and upstreamCallback below.
 */

/** Form bodies of the OAuth endpoints are small; anything bigger is refused before it is read whole. */
const FORM_LIMIT = 64 * 1024;
const CORS = { "access-control-allow-origin": "*" };

async function readForm(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type") ?? "";
  if (!/^application\/x-www-form-urlencoded\b/i.test(type)) {
    throw new OAuthError("invalid_request", "Send the parameters as application/x-www-form-urlencoded.");
  }
  return new URLSearchParams(await readText(request, FORM_LIMIT));
}

const redirect = (location: string) =>
  new Response(null, {
    status: 302,
    headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });

/** The browser's answer to a step of the authorize flow (core/features/mcp/oauth/authorize.ts). */
function answerStep(step: AuthorizeStep): Response {
  switch (step.kind) {
    case "error":
      return errorPage(step.message, step.status);
    case "redirect":
      return redirect(step.location);
    case "sign-in":
      return signInPage(step.page, step.status);
    case "consent":
      return consentPage(step.page);
  }
}

const sessionCookie = (request: Request) => readCookie(request.headers.get("cookie"), SESSION_COOKIE);

/** Pages of the sign-in and consent steps: a form's request id and CSRF token name the pending request. */
async function pendingFromForm(
  request: Request,
  ctx: RequestContext,
): Promise<{ form: URLSearchParams; pending: PendingForm } | Response> {
  const base = publicBase(request, ctx.services.settings);
  if (!isSameOriginForm(request.headers, new URL(base).origin)) {
    return errorPage("Cross-site form refused: submit the form from the gateway's own page.", 403);
  }
  if (!/^application\/x-www-form-urlencoded\b/i.test(request.headers.get("content-type") ?? "")) {
    return errorPage("The form was not sent as a form.", 400);
  }
  let form: URLSearchParams;
  try {
    form = new URLSearchParams(await readText(request, FORM_LIMIT));
  } catch (error) {
    if (error instanceof HttpError) return errorPage(error.message, error.status);
    throw error;
  }
  const id = form.get("request_id") ?? "";
  const pending = await findAuthorizationRequest(ctx.services.stores.records, id, form.get("csrf") ?? "");
  if (!pending)
    return errorPage("This authorization request has expired or is invalid. Start again from your application.");
  return { form, pending: { id, pending } };
}

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

export const handlers: HandlerMap = {
  async authorizationServerMetadata(request, ctx) {
    const base = publicBase(request, ctx.services.settings);
    return oauthJson(authorizationServerMetadata(base), 200, { ...CORS, "cache-control": "public, max-age=300" });
  },

  async protectedResourceMetadata(request, ctx) {
    const base = publicBase(request, ctx.services.settings);
    const ref = ctx.params.server;
    if (ref === undefined) {
      return oauthJson(protectedResourceMetadata(base, base), 200, CORS);
    }
    const server = await findMcpServer(ctx.services.stores.records, ref);
    if (!server) throw notFound(`Unknown MCP server '${ref.slice(0, 200)}'.`);
    return oauthJson(protectedResourceMetadata(base, resourceUrl(base, ref), server.name), 200, CORS);
  },

  async registerClient(request, ctx) {
    return answerOAuth(async () => {
      const body = await readJson(request, FORM_LIMIT);
      const metadata = parseClientMetadata(body);
      const { records, counters } = ctx.services.stores;
      const settings = ctx.services.settings;
      await admitRegistration(counters, settings.GATEWAY_OAUTH_REGISTRATIONS_PER_HOUR);
      const { client, secret } = await registerClient(
        records,
        metadata,
        settings.GATEWAY_OAUTH_UNUSED_CLIENT_TTL_SECONDS,
      );
      const organisationId = await deploymentOrganisation(records);
      if (organisationId) {
        await recordAudit(records, {
          principal: { kind: "oauth", organisationId, scopes: [] },
          traceId: ctx.traceId,
          action: "create",
          resourceType: "oauth_client",
          resourceId: client.client_id,
          after: presentClient(client),
        });
      }
      return oauthJson(presentClient(client, secret), 201, CORS);
    });
  },

  async authorize(request, ctx) {
    const base = publicBase(request, ctx.services.settings);
    const url = new URL(request.url);
    return answerStep(await startAuthorization(ctx.services, { base, url, sessionId: sessionCookie(request) }));
  },

  async authorizeSignIn(request, ctx) {
    const found = await pendingFromForm(request, ctx);
    if (found instanceof Response) return found;
    const { form, pending } = found;
    const apiKey = (form.get("api_key") ?? "").trim();
    try {
      return answerStep(await signInWithApiKey(ctx.services, pending, apiKey));
    } catch (error) {
      if (error instanceof HttpError && error.status === 401) {
        return answerStep(await refuseSignIn(ctx.services.stores.records, pending, "That API key is not valid."));
      }
      throw error;
    }
  },

  async authorizeConsent(request, ctx) {
    const found = await pendingFromForm(request, ctx);
    if (found instanceof Response) return found;
    const { form, pending } = found;
    const step = await decideConsent(ctx.services.stores.records, pending, {
      base: publicBase(request, ctx.services.settings),
      decision: form.get("decision"),
      sessionId: sessionCookie(request),
      traceId: ctx.traceId,
    });
    return answerStep(step);
  },

  async token(request, ctx) {
    return answerOAuth(async () => {
      const form = await readForm(request);
      const tokens = await exchangeToken(ctx.services.stores.records, ctx.services.settings, request.headers, form);
      return oauthJson(tokens, 200, CORS);
    });
  },

  async introspect(request, ctx) {
    return answerOAuth(async () => {
      const records = ctx.services.stores.records;
      const form = await readForm(request);
      const token = form.get("token");
      let caller: Introspector;
      const adminKey = request.headers.get("x-gateway-api-key") ?? request.headers.get("x-portkey-api-key");
      if (adminKey) {
        caller = requireAdminIntrospector(await ctx.services.apiKeys.authenticate(adminKey));
      } else {
        const client = await authenticateClient(records, presentedClient(request.headers, form), {
          requireSecret: true,
        });
        caller = { kind: "client", clientId: client.client_id };
      }
      if (!token) throw new OAuthError("invalid_request", "'token' is required.", { param: "token" });
      return oauthJson(await introspect(records, publicBase(request, ctx.services.settings), caller, token));
    });
  },

  async revoke(request, ctx) {
    return answerOAuth(async () => {
      const records = ctx.services.stores.records;
      const form = await readForm(request);
      const client = await authenticateClient(records, presentedClient(request.headers, form));
      const token = form.get("token");
      if (!token) throw new OAuthError("invalid_request", "'token' is required.", { param: "token" });
      const revoked = await revokeToken(records, client.client_id, token);
      if (revoked) {
        await recordAudit(records, {
          principal: subjectPrincipal(revoked.subject),
          traceId: ctx.traceId,
          action: "delete",
          resourceType: revoked.kind === "refresh" ? "oauth_grant" : "oauth_access_token",
          resourceId: revoked.familyId,
          workspaceId: revoked.subject.workspaceId,
        });
      }
      return oauthJson({}, 200, CORS);
    });
  },

  // Per-user OAuth to upstream MCP servers (core/features/mcp/upstream/oauth-connect.ts): `GET
  // /oauth/upstream/:server/connect` (a signed-in user: the SSO session cookie, or a user API key) redirects to
  // the upstream's authorize page; `GET /oauth/upstream/callback` finishes and shows a page.
  async upstreamConnect(request, ctx) {
    const principal = await userPrincipal(request, ctx);
    const url = await startConnect(
      ctx.services,
      principal,
      ctx.params.server!,
      publicBase(request, ctx.services.settings),
    );
    return redirect(url.href);
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

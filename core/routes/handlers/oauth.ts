import type { Principal } from "../../auth/principal.ts";
import { DEPLOYMENT_KEY } from "../../control/bootstrap.ts";
import { recordAudit } from "../../control/audit.ts";
import type { HandlerMap, RequestContext } from "../../http/context.ts";
import { HttpError, notFound } from "../../http/errors.ts";
import { readJson, readText } from "../../http/json.ts";
import { sha256Hex } from "../../ids.ts";
import { checkAuthorizeQuery, redirectWith } from "../../mcp/oauth/authorize-request.ts";
import {
  authenticateClient,
  parseClientMetadata,
  presentClient,
  presentedClient,
  registerClient,
} from "../../mcp/oauth/clients.ts";
import { issueCode } from "../../mcp/oauth/codes.ts";
import {
  type GrantSubject,
  SubjectRefused,
  subjectFromApiKey,
  subjectFromSession,
} from "../../mcp/oauth/grant-subject.ts";
import { type Introspector, introspect, requireAdminIntrospector } from "../../mcp/oauth/introspection.ts";
import { authorizationServerMetadata, protectedResourceMetadata } from "../../mcp/oauth/metadata.ts";
import { OAuthError, answerOAuth, oauthJson } from "../../mcp/oauth/oauth-errors.ts";
import { isSameOriginForm } from "../../mcp/oauth/page-forms.ts";
import { consentPage, errorPage, signInPage } from "../../mcp/oauth/pages.ts";
import {
  type AuthorizationRequest,
  claimAuthorizationRequest,
  createAuthorizationRequest,
  findAuthorizationRequest,
  renewCsrf,
  setSubject,
} from "../../mcp/oauth/pending-requests.ts";
import { admitAuthorizationRequest } from "../../mcp/oauth/authorize-limit.ts";
import { admitRegistration } from "../../mcp/oauth/registration-limit.ts";
import { findMcpServer, publicBase, resourceUrl } from "../../mcp/oauth/resources.ts";
import { revokeToken } from "../../mcp/oauth/revocation.ts";
import { exchangeToken } from "../../mcp/oauth/token-endpoint.ts";
import { SESSION_COOKIE, SessionError, readCookie } from "../../sso/sessions.ts";
import { readSsoSettings } from "../../sso/sso-settings.ts";
import { upstreamHandlers } from "./oauth-upstream.ts";

/**
 * The gateway as an OAuth 2.1 authorization server for MCP clients (core/mcp/oauth; docs/mcp-oauth.md):
 * discovery (RFC 8414, RFC 9728), dynamic client registration (RFC 7591), the authorize pages (sign-in with SSO or
 * an API key, then consent), the token endpoint, introspection (RFC 7662) and revocation (RFC 7009). Its tokens
 * open only the MCP endpoint (core/mcp/oauth/bearer.ts). Per-user OAuth to upstream MCP servers:
 * ./oauth-upstream.ts.
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

/** The deployment's own organisation: the one unauthenticated OAuth actions (registration) are recorded in. */
async function deploymentOrganisation(ctx: RequestContext): Promise<string | undefined> {
  const item = await ctx.services.stores.records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
  return typeof item?.organisationId === "string" ? item.organisationId : undefined;
}

const subjectPrincipal = (subject: GrantSubject): Principal => ({
  kind: "oauth",
  organisationId: subject.organisationId,
  workspaceId: subject.workspaceId,
  userId: subject.userId,
  userEmail: subject.userEmail,
  keyId: subject.keyId,
  scopes: [],
});

const redirect = (location: string) =>
  new Response(null, {
    status: 302,
    headers: { location, "cache-control": "no-store", "referrer-policy": "no-referrer" },
  });

/** What the consent page says of who signed in. */
function subjectLabel(subject: GrantSubject): string {
  if (subject.userEmail) return subject.via === "api_key" ? `${subject.userEmail} (API key)` : subject.userEmail;
  return `API key ${subject.keyId ?? ""}`.trim();
}

async function ssoLoginUrl(request: Request, ctx: RequestContext): Promise<string | undefined> {
  const organisationId = await deploymentOrganisation(ctx);
  if (!organisationId) return undefined;
  const settings = await readSsoSettings(ctx.services.stores.records, organisationId);
  if (!settings?.enabled) return undefined;
  const url = new URL(request.url);
  const back = `/oauth/authorize${url.search}`;
  // The SSO login accepts same-site paths only (core/sso/login-flow.ts safeRedirect); a longer one cannot return.
  return back.length <= 2000 ? `/v1/auth/sso/login?redirect=${encodeURIComponent(back)}` : undefined;
}

/** Pages of the sign-in and consent steps: a form's request id and CSRF token name the pending request. */
async function pendingFromForm(
  request: Request,
  ctx: RequestContext,
): Promise<{ form: URLSearchParams; id: string; pending: AuthorizationRequest } | Response> {
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
  return { form, id, pending };
}

export const handlers: HandlerMap = {
  ...upstreamHandlers,

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
      const organisationId = await deploymentOrganisation(ctx);
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
    const records = ctx.services.stores.records;
    const base = publicBase(request, ctx.services.settings);
    const check = await checkAuthorizeQuery(records, base, new URL(request.url).searchParams);
    if (check.kind === "page") return errorPage(check.message);
    if (check.kind === "redirect") return redirect(check.url);
    const clientName = check.client.client_name ?? check.client.client_id;
    if (!(await admitAuthorizationRequest(ctx.services.stores.counters, check.client.client_id))) {
      return errorPage("Too many sign-in attempts for this application. Wait a few minutes and start again.", 429);
    }
    const { id, csrf } = await createAuthorizationRequest(records, check.request);
    const sessionId = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
    let refused: string | undefined;
    if (sessionId) {
      try {
        const { subject } = await subjectFromSession(ctx.services, sessionId, new URL(base).origin, check.target);
        const label = subjectLabel(subject);
        const consentCsrf = await setSubject(records, id, {
          subject,
          sessionHash: sha256Hex(sessionId),
          subjectLabel: label,
        });
        return consentPage({
          requestId: id,
          csrf: consentCsrf,
          clientName,
          redirectUri: check.request.redirectUri,
          subjectLabel: label,
          resourceName: check.request.serverName,
          scope: check.request.scope,
        });
      } catch (error) {
        if (error instanceof SubjectRefused) refused = error.message;
        else if (!(error instanceof SessionError)) throw error;
      }
    }
    return signInPage({
      requestId: id,
      csrf,
      clientName,
      resourceName: check.request.serverName,
      ssoUrl: await ssoLoginUrl(request, ctx),
      error: refused,
    });
  },

  async authorizeSignIn(request, ctx) {
    const found = await pendingFromForm(request, ctx);
    if (found instanceof Response) return found;
    const { form, id, pending } = found;
    const records = ctx.services.stores.records;
    const retry = async (message: string) => {
      // A failed sign-in keeps the request; the page gets a fresh CSRF token.
      const csrf = await renewCsrf(records, id);
      return signInPage(
        {
          requestId: id,
          csrf,
          clientName: pending.clientName ?? pending.clientId,
          resourceName: pending.serverName,
          error: message,
        },
        401,
      );
    };
    const apiKey = (form.get("api_key") ?? "").trim();
    if (!apiKey || apiKey.length > 500) return retry("Enter a gateway API key.");
    let subject: GrantSubject;
    try {
      const target = pending.serverId ? await findMcpServer(records, pending.serverId) : undefined;
      if (pending.serverId && !target) return errorPage("The MCP server no longer exists.");
      ({ subject } = await subjectFromApiKey(
        ctx.services,
        apiKey,
        target ? { kind: "server", server: target } : undefined,
      ));
    } catch (error) {
      if (error instanceof SubjectRefused) return retry(error.message);
      if (error instanceof HttpError && error.status === 401) return retry("That API key is not valid.");
      throw error;
    }
    const label = subjectLabel(subject);
    const csrf = await setSubject(records, id, { subject, subjectLabel: label });
    return consentPage({
      requestId: id,
      csrf,
      clientName: pending.clientName ?? pending.clientId,
      redirectUri: pending.redirectUri,
      subjectLabel: label,
      resourceName: pending.serverName,
      scope: pending.scope,
    });
  },

  async authorizeConsent(request, ctx) {
    const found = await pendingFromForm(request, ctx);
    if (found instanceof Response) return found;
    const { form, id, pending } = found;
    const records = ctx.services.stores.records;
    const base = publicBase(request, ctx.services.settings);
    if (!pending.subject) return errorPage("Sign in first.", 401);
    if (pending.sessionHash) {
      // A consent page shown to a session is decided by that session only.
      const sessionId = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
      if (!sessionId || sha256Hex(sessionId) !== pending.sessionHash)
        return errorPage("Your session changed. Start again.", 403);
    }
    const decision = form.get("decision");
    if (decision !== "approve" && decision !== "deny") return errorPage("Choose Allow or Deny.");
    if (!(await claimAuthorizationRequest(records, id))) {
      return errorPage("This authorization request was already decided.");
    }
    if (decision === "deny") {
      return redirect(
        redirectWith(pending.redirectUri, base, {
          error: "access_denied",
          error_description: "The user denied the request.",
          state: pending.state,
        }),
      );
    }
    const { code, familyId } = await issueCode(records, {
      clientId: pending.clientId,
      redirectUri: pending.redirectUri,
      codeChallenge: pending.codeChallenge,
      scope: pending.scope,
      resource: pending.resource,
      serverId: pending.serverId,
      subject: pending.subject,
    });
    await recordAudit(records, {
      principal: subjectPrincipal(pending.subject),
      traceId: ctx.traceId,
      action: "create",
      resourceType: "oauth_grant",
      resourceId: familyId,
      workspaceId: pending.subject.workspaceId,
      after: { client_id: pending.clientId, scope: pending.scope, resource: pending.resource ?? null },
    });
    return redirect(redirectWith(pending.redirectUri, base, { code, state: pending.state }));
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
};

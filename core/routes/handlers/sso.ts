import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { json, parseJsonWithinDepth, readBody, readText, validate } from "../../http/json.ts";
import { checkCustomHost } from "../../security/custom-host.ts";
import { type LoginDeps, finishLogin, startLogin } from "../../identity/sso/login-flow.ts";
import { forgetOidcConfigs } from "../../identity/sso/oidc-config.ts";
import {
  SESSION_COOKIE,
  clearedCookies,
  endSession,
  passesCsrf,
  readCookie,
  sessionCookies,
} from "../../identity/sso/sessions.ts";
import { ssoSettingsUpdateSchema } from "../../identity/sso/schemas.ts";
import { type SsoDeps, getSsoSettings, updateSsoSettings } from "../../identity/sso/service.ts";
import { DEPLOYMENT_KEY } from "../../control/organisation/bootstrap.ts";
import { forbidden } from "../../http/errors.ts";
import * as z from "zod";

const logoutBody = z.strictObject({});

/**
 * OIDC single sign-on (core/identity/sso): the organisation's SSO settings (`/v1/admin/organisation/sso`), the browser
 * login (`/v1/auth/sso/login` -> IdP -> `/v1/auth/sso/callback`, which sets the session cookie) and logout.
 */

const gatewayUrl = (request: Request, ctx: RequestContext) =>
  new URL(ctx.services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin);

const settingsDeps = (ctx: RequestContext): SsoDeps => ({
  records: ctx.services.stores.records,
  traceId: ctx.traceId,
  secrets: ctx.services.stores.secrets,
  checkIssuer: async (issuer) => {
    await checkCustomHost(issuer, ctx.services.trustedHosts, "issuer");
  },
  ssoChanged: forgetOidcConfigs,
});

const loginDeps = (request: Request, ctx: RequestContext): LoginDeps => ({
  records: ctx.services.stores.records,
  secrets: ctx.services.stores.secrets,
  trusted: ctx.services.trustedHosts,
  callbackUrl: new URL("/v1/auth/sso/callback", gatewayUrl(request, ctx)).href,
  sessionTtlSeconds: ctx.services.settings.GATEWAY_SESSION_TTL_SECONDS,
  traceId: ctx.traceId,
});

const redirectTo = (location: string, cookies: string[] = []) => {
  const headers = new Headers({ location, "cache-control": "no-store" });
  for (const cookie of cookies) headers.append("set-cookie", cookie);
  return new Response(null, { status: 302, headers });
};

/** `organisation` names an organisation by id; without it, the deployment's own organisation. */
async function organisationOf(param: string | null, ctx: RequestContext): Promise<string> {
  if (param) return param;
  const deployment = await ctx.services.stores.records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
  return (deployment?.organisationId as string | undefined) ?? "";
}

export const handlers: HandlerMap = {
  async getSsoSettings(_request, ctx) {
    return json(await getSsoSettings(settingsDeps(ctx), ctx.principal!));
  },

  async updateSsoSettings(request, ctx) {
    const body = () => readBody(request, ssoSettingsUpdateSchema, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    return json(await updateSsoSettings(settingsDeps(ctx), ctx.principal!, body));
  },

  async ssoLogin(request, ctx) {
    const query = new URL(request.url).searchParams;
    const url = await startLogin(loginDeps(request, ctx), {
      organisationId: await organisationOf(query.get("organisation"), ctx),
      ssoClientId: query.get("sso_client_id") ?? undefined,
      redirect: query.get("redirect") ?? undefined,
    });
    return redirectTo(url.href);
  },

  async ssoCallback(request, ctx) {
    const result = await finishLogin(loginDeps(request, ctx), new URL(request.url).searchParams);
    const ttl = ctx.services.settings.GATEWAY_SESSION_TTL_SECONDS;
    const cookies = sessionCookies(
      { id: result.sessionId, csrfToken: result.csrfToken },
      gatewayUrl(request, ctx),
      ttl,
    );
    // The path was checked at login (core/identity/sso/login-flow.ts safeRedirect): never another site.
    return redirectTo(result.redirect, cookies);
  },

  async logout(request, ctx) {
    // Logout takes no input: no body, or `{}`; anything else is refused.
    const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    if (text.trim() !== "") validate(logoutBody, parseJsonWithinDepth(text, null, "The request body"));
    const sessionId = readCookie(request.headers.get("cookie"), SESSION_COOKIE);
    if (sessionId) {
      // Logging out is a state change too: same CSRF rule as every cookie-authenticated call.
      const check = { method: request.method, origin: gatewayUrl(request, ctx).origin, headers: request.headers };
      if (!passesCsrf(sessionId, check)) {
        throw forbidden("Cross-site request refused: send the x-gateway-csrf header.", "csrf_failed");
      }
      await endSession(ctx.services.stores.records, sessionId);
    }
    const headers = new Headers({ "content-type": "application/json", "cache-control": "no-store" });
    for (const cookie of clearedCookies(gatewayUrl(request, ctx))) headers.append("set-cookie", cookie);
    return new Response(JSON.stringify({ object: "logout", success: true }), { status: 200, headers });
  },
};

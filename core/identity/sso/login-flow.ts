import { recordAudit } from "../../control/audit.ts";
import { findUserByEmail } from "../../control/directory.ts";
import { Forbidden, NotFound, Unauthenticated, Invalid } from "../../control/errors.ts";
import { findOrganisation } from "../../control/organisation/store.ts";
import { userStore } from "../../control/users/store.ts";
import { sha256Hex } from "../../util/ids.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
import { ConditionFailedError, type Records, type Secrets } from "../../store/ports.ts";
import { oidcConfig } from "./oidc-config.ts";
import { createSession } from "./sessions.ts";
import { type SsoSettingsRecord, readSsoSettings, selectClient } from "./settings.ts";

/**
 * The OIDC authorisation-code flow with PKCE (S256), state and nonce. The login keeps its checks server-side in
 * Records (pk `SSOSTATE#<sha256(state)>`, ten minutes); the callback deletes that record conditionally before
 * exchanging the code, so a callback is accepted once: a replay finds nothing. openid-client checks the ID
 * token's signature, issuer, audience, nonce and expiry. Users are found by their verified email and, where the
 * settings allow it, provisioned as organisation members.
 */

const STATE_TTL_SECONDS = 600;

export interface LoginDeps {
  records: Records;
  secrets: Secrets;
  trusted: TrustedHosts;
  /** The gateway's callback URL (`<public URL>/v1/auth/sso/callback`): the IdP's registered redirect URI. */
  callbackUrl: string;
  sessionTtlSeconds: number;
  traceId: string;
}

interface PendingLogin {
  organisationId: string;
  ssoClientId: string;
  codeVerifier: string;
  nonce: string;
  redirect: string;
}

const stateKey = (state: string) => ({ pk: `SSOSTATE#${sha256Hex(state)}`, sk: "SSOSTATE" });

/** Only same-site relative paths: `/x`, never `//host`, `/\host` or an absolute URL (open redirects). */
export function safeRedirect(value: string | undefined): string | undefined {
  if (value === undefined || value === "") return "/";
  if (!value.startsWith("/") || value.startsWith("//") || value.startsWith("/\\")) return undefined;
  if (value.length > 2000 || /[\s\\]/.test(value)) return undefined;
  if ([...value].some((char) => char.charCodeAt(0) < 0x20 || char.charCodeAt(0) === 0x7f)) return undefined;
  return value;
}

const notConfigured = () =>
  new NotFound("Single sign-on is not set up for this organisation.", { code: "sso_not_configured" });

async function loadSettings(records: Records, organisationId: string): Promise<SsoSettingsRecord> {
  if (!(await findOrganisation(records, organisationId))) throw notConfigured();
  const settings = await readSsoSettings(records, organisationId);
  if (!settings?.enabled) throw notConfigured();
  return settings;
}

/** The IdP authorisation URL to send the browser to. */
export async function startLogin(
  deps: LoginDeps,
  input: { organisationId: string; ssoClientId?: string; redirect?: string },
): Promise<URL> {
  const redirect = safeRedirect(input.redirect);
  if (!redirect) throw new Invalid("'redirect' must be a relative path on this gateway.", { param: "redirect" });
  const settings = await loadSettings(deps.records, input.organisationId);
  const client = selectClient(settings, input.ssoClientId);
  if (!client) throw new NotFound(`Unknown sso_client_id '${input.ssoClientId}'.`, { param: "sso_client_id" });
  const oidc = await import("openid-client");
  const config = await oidcConfig(settings, client, input.ssoClientId ?? "", deps.secrets, deps.trusted);
  const codeVerifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const pending: PendingLogin = {
    organisationId: input.organisationId,
    ssoClientId: input.ssoClientId ?? "",
    codeVerifier,
    nonce,
    redirect,
  };
  const ttl = Math.floor(Date.now() / 1000) + STATE_TTL_SECONDS;
  await deps.records.put({ ...stateKey(state), ...pending, ttl }, { exists: false });
  return oidc.buildAuthorizationUrl(config, {
    redirect_uri: deps.callbackUrl,
    scope: client.scopes.join(" "),
    response_type: "code",
    code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
}

export interface FinishedLogin {
  sessionId: string;
  csrfToken: string;
  redirect: string;
  organisationId: string;
  userId: string;
  provisioned: boolean;
}

/** Exchanges the callback's code (once), checks the ID token and signs the user in. */
export async function finishLogin(deps: LoginDeps, callback: URLSearchParams): Promise<FinishedLogin> {
  const state = callback.get("state");
  if (!state) throw new Invalid("The callback has no 'state'.", { param: "state" });
  const key = stateKey(state);
  const item = await deps.records.get(key.pk, key.sk);
  // Claim the login before anything else: of two uses of one callback, only one gets past this delete.
  try {
    if (!item) throw new ConditionFailedError("absent");
    await deps.records.delete(key.pk, key.sk, { exists: true });
  } catch (error) {
    if (!(error instanceof ConditionFailedError)) throw error;
    throw new Unauthenticated("This sign-in has expired or was already used. Start again.", {
      code: "sso_state_invalid",
    });
  }
  const pending = item as unknown as PendingLogin;
  if (callback.get("error")) {
    throw new Unauthenticated("The identity provider refused the sign-in.", { code: "sso_failed" });
  }
  const settings = await loadSettings(deps.records, pending.organisationId);
  const client = selectClient(settings, pending.ssoClientId || undefined);
  if (!client) throw notConfigured();
  const oidc = await import("openid-client");
  const config = await oidcConfig(settings, client, pending.ssoClientId, deps.secrets, deps.trusted);
  const current = new URL(deps.callbackUrl);
  current.search = callback.toString();
  let claims: Record<string, unknown> | undefined;
  try {
    const tokens = await oidc.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: pending.codeVerifier,
      expectedState: state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    claims = tokens.claims();
  } catch (error) {
    // The reason goes to the operator's log (no tokens in it); the browser gets a plain refusal.
    console.error(`SSO: sign-in for organisation ${pending.organisationId} failed: ${(error as Error)?.message}`);
    throw new Unauthenticated("The identity provider's answer could not be verified.", { code: "sso_failed" });
  }
  const email = typeof claims?.email === "string" ? claims.email.trim().toLowerCase() : "";
  if (!email) throw new Forbidden("The identity provider gave no email address.", { code: "sso_email_missing" });
  // An unverified address could name someone else's account: never sign in or provision by it.
  if (claims?.email_verified !== true) {
    throw new Forbidden("The identity provider has not verified this email address.", { code: "sso_email_unverified" });
  }
  let user = await findUserByEmail(deps.records, pending.organisationId, email);
  if (user?.active === false) {
    throw new Forbidden("This user is deactivated in this organisation.", { code: "user_deactivated" });
  }
  const provisioned = !user;
  const domain = email.slice(email.lastIndexOf("@") + 1);
  const domainListed = settings.allowed_domains.includes(domain);
  // Spec 5.5: with auto-provisioning off, sign-in is for invited users, of a listed domain when a list is set.
  if (user && settings.disable_auto_provision_user && settings.allowed_domains.length > 0 && !domainListed) {
    throw new Forbidden("This user may not sign in to this organisation.", { code: "sso_user_not_allowed" });
  }
  if (!user) {
    if (settings.disable_auto_provision_user || !domainListed) {
      throw new Forbidden("This user may not sign in to this organisation.", { code: "sso_user_not_allowed" });
    }
    const name = typeof claims?.name === "string" ? claims.name.slice(0, 200) : null;
    user = await userStore(deps.records).create(pending.organisationId, {
      slug: email,
      email,
      name,
      first_name: typeof claims?.given_name === "string" ? claims.given_name.slice(0, 100) : null,
      last_name: typeof claims?.family_name === "string" ? claims.family_name.slice(0, 100) : null,
      role: "member",
    });
    await recordAudit(deps.records, {
      principal: {
        kind: "session",
        organisationId: user.organisationId,
        userId: user.id,
        userEmail: email,
        scopes: [],
      },
      traceId: deps.traceId,
      action: "create",
      resourceType: "user",
      resourceId: user.id,
      after: { email, role: "member", provisioned_by: "sso" },
    });
  }
  const session = await createSession(
    deps.records,
    { organisationId: pending.organisationId, userId: user.id },
    deps.sessionTtlSeconds,
  );
  return {
    sessionId: session.id,
    csrfToken: session.csrfToken,
    redirect: pending.redirect,
    organisationId: pending.organisationId,
    userId: user.id,
    provisioned,
  };
}

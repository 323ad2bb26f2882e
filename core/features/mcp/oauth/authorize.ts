import type { Principal } from "../../../auth/principal.ts";
import { recordAudit } from "../../../control/audit.ts";
import { DEPLOYMENT_KEY } from "../../../control/organisation/bootstrap.ts";
import { SessionError } from "../../../identity/sso/sessions.ts";
import { readSsoSettings } from "../../../identity/sso/settings.ts";
import type { Services } from "../../../services.ts";
import type { Records } from "../../../store/ports.ts";
import { sha256Hex } from "../../../util/ids.ts";
import { admitAuthorizationRequest } from "./authorize-limit.ts";
import { checkAuthorizeQuery, redirectWith } from "./authorize-request.ts";
import { issueCode } from "./codes.ts";
import { type GrantSubject, SubjectRefused, subjectFromApiKey, subjectFromSession } from "./grant-subject.ts";
import type { ConsentPage, SignInPage } from "./pages.ts";
import {
  type AuthorizationRequest,
  claimAuthorizationRequest,
  createAuthorizationRequest,
  renewCsrf,
  setSubject,
} from "./pending-requests.ts";
import { findMcpServer } from "./resources.ts";

/**
 * The authorize flow of the gateway's OAuth server (docs/mcp-oauth.md), as three steps: the authorize request
 * (`GET /oauth/authorize`), the API-key sign-in form and the consent form. Each step answers what the browser is
 * shown next; core/routes/handlers/oauth.ts reads the request and turns the step into a page or a redirect.
 */
export type AuthorizeStep =
  | { kind: "error"; message: string; status?: number }
  | { kind: "redirect"; location: string }
  | { kind: "sign-in"; page: SignInPage; status?: number }
  | { kind: "consent"; page: ConsentPage };

/** A pending authorization request, found by the request id and CSRF token its form carried. */
export interface PendingForm {
  id: string;
  pending: AuthorizationRequest;
}

/** The deployment's own organisation: the one unauthenticated OAuth actions (registration) are recorded in. */
export async function deploymentOrganisation(records: Records): Promise<string | undefined> {
  const item = await records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
  return typeof item?.organisationId === "string" ? item.organisationId : undefined;
}

/** The principal an audit entry names for what a grant's subject did. */
export const subjectPrincipal = (subject: GrantSubject): Principal => ({
  kind: "oauth",
  organisationId: subject.organisationId,
  workspaceId: subject.workspaceId,
  userId: subject.userId,
  userEmail: subject.userEmail,
  keyId: subject.keyId,
  scopes: [],
});

/** What the consent page says of who signed in. */
function subjectLabel(subject: GrantSubject): string {
  if (subject.userEmail) return subject.via === "api_key" ? `${subject.userEmail} (API key)` : subject.userEmail;
  return `API key ${subject.keyId ?? ""}`.trim();
}

/** The SSO login that returns to this authorize request, when the deployment's organisation has SSO on. */
async function ssoLoginUrl(records: Records, search: string): Promise<string | undefined> {
  const organisationId = await deploymentOrganisation(records);
  if (!organisationId) return undefined;
  const settings = await readSsoSettings(records, organisationId);
  if (!settings?.enabled) return undefined;
  const back = `/oauth/authorize${search}`;
  // The SSO login accepts same-site paths only (core/identity/sso/login-flow.ts safeRedirect); a longer one cannot return.
  return back.length <= 2000 ? `/v1/auth/sso/login?redirect=${encodeURIComponent(back)}` : undefined;
}

/**
 * `GET /oauth/authorize`: the request is checked and kept pending; a signed-in SSO session goes straight to
 * consent, anyone else gets the sign-in page.
 */
export async function startAuthorization(
  services: Services,
  input: { base: string; url: URL; sessionId: string | undefined },
): Promise<AuthorizeStep> {
  const records = services.stores.records;
  const check = await checkAuthorizeQuery(records, input.base, input.url.searchParams);
  if (check.kind === "page") return { kind: "error", message: check.message };
  if (check.kind === "redirect") return { kind: "redirect", location: check.url };
  const clientName = check.client.client_name ?? check.client.client_id;
  if (!(await admitAuthorizationRequest(services.stores.counters, check.client.client_id))) {
    return {
      kind: "error",
      message: "Too many sign-in attempts for this application. Wait a few minutes and start again.",
      status: 429,
    };
  }
  const { id, csrf } = await createAuthorizationRequest(records, check.request);
  let refused: string | undefined;
  if (input.sessionId) {
    try {
      const origin = new URL(input.base).origin;
      const { subject } = await subjectFromSession(services, input.sessionId, origin, check.target);
      const label = subjectLabel(subject);
      const consentCsrf = await setSubject(records, id, {
        subject,
        sessionHash: sha256Hex(input.sessionId),
        subjectLabel: label,
      });
      return {
        kind: "consent",
        page: {
          requestId: id,
          csrf: consentCsrf,
          clientName,
          redirectUri: check.request.redirectUri,
          subjectLabel: label,
          resourceName: check.request.serverName,
          scope: check.request.scope,
        },
      };
    } catch (error) {
      if (error instanceof SubjectRefused) refused = error.message;
      else if (!(error instanceof SessionError)) throw error;
    }
  }
  return {
    kind: "sign-in",
    page: {
      requestId: id,
      csrf,
      clientName,
      resourceName: check.request.serverName,
      ssoUrl: await ssoLoginUrl(records, input.url.search),
      error: refused,
    },
  };
}

/** The sign-in page again, with `message` and a fresh CSRF token: a failed sign-in keeps the request. */
export async function refuseSignIn(records: Records, form: PendingForm, message: string): Promise<AuthorizeStep> {
  const { id, pending } = form;
  const csrf = await renewCsrf(records, id);
  return {
    kind: "sign-in",
    page: {
      requestId: id,
      csrf,
      clientName: pending.clientName ?? pending.clientId,
      resourceName: pending.serverName,
      error: message,
    },
    status: 401,
  };
}

/**
 * `POST /oauth/authorize/sign-in`: a gateway API key signs in; its holder is shown the consent page. An invalid
 * key throws the API-key authenticator's 401, which the handler answers with the sign-in page again.
 */
export async function signInWithApiKey(services: Services, form: PendingForm, apiKey: string): Promise<AuthorizeStep> {
  const records = services.stores.records;
  const { id, pending } = form;
  if (!apiKey || apiKey.length > 500) return refuseSignIn(records, form, "Enter a gateway API key.");
  let subject: GrantSubject;
  try {
    const target = pending.serverId ? await findMcpServer(records, pending.serverId) : undefined;
    if (pending.serverId && !target) return { kind: "error", message: "The MCP server no longer exists." };
    ({ subject } = await subjectFromApiKey(services, apiKey, target ? { kind: "server", server: target } : undefined));
  } catch (error) {
    if (error instanceof SubjectRefused) return refuseSignIn(records, form, error.message);
    throw error;
  }
  const label = subjectLabel(subject);
  const csrf = await setSubject(records, id, { subject, subjectLabel: label });
  return {
    kind: "consent",
    page: {
      requestId: id,
      csrf,
      clientName: pending.clientName ?? pending.clientId,
      redirectUri: pending.redirectUri,
      subjectLabel: label,
      resourceName: pending.serverName,
      scope: pending.scope,
    },
  };
}

/**
 * `POST /oauth/authorize/consent`: Allow issues a code (and records the grant), Deny sends the client
 * `access_denied`; either way back to the client's redirect URI. A consent page shown to a session is decided by
 * that session only, and a request is decided once.
 */
export async function decideConsent(
  records: Records,
  form: PendingForm,
  input: { base: string; decision: string | null; sessionId: string | undefined; traceId: string },
): Promise<AuthorizeStep> {
  const { id, pending } = form;
  if (!pending.subject) return { kind: "error", message: "Sign in first.", status: 401 };
  if (pending.sessionHash && (!input.sessionId || sha256Hex(input.sessionId) !== pending.sessionHash)) {
    return { kind: "error", message: "Your session changed. Start again.", status: 403 };
  }
  if (input.decision !== "approve" && input.decision !== "deny")
    return { kind: "error", message: "Choose Allow or Deny." };
  if (!(await claimAuthorizationRequest(records, id))) {
    return { kind: "error", message: "This authorization request was already decided." };
  }
  if (input.decision === "deny") {
    const location = redirectWith(pending.redirectUri, input.base, {
      error: "access_denied",
      error_description: "The user denied the request.",
      state: pending.state,
    });
    return { kind: "redirect", location };
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
    traceId: input.traceId,
    action: "create",
    resourceType: "oauth_grant",
    resourceId: familyId,
    workspaceId: pending.subject.workspaceId,
    after: { client_id: pending.clientId, scope: pending.scope, resource: pending.resource ?? null },
  });
  return { kind: "redirect", location: redirectWith(pending.redirectUri, input.base, { code, state: pending.state }) };
}

import { readApiKeyLookup } from "../../../auth/api-key-records.ts";
import type { OrganisationRole, Principal } from "../../../auth/principal.ts";
import { findUser } from "../../../control/directory.ts";
import { getMembership } from "../../../control/workspaces/members.ts";
import { sha256Hex } from "../../../util/ids.ts";
import type { Services } from "../../../services.ts";
import { authenticateSession } from "../../../identity/sso/sessions.ts";
import type { Records } from "../../../store/ports.ts";
import type { ResourceTarget } from "./resources.ts";

/**
 * Who a grant acts for: the identity that signed in at the authorize step, an API key or an SSO session. Tokens
 * keep this snapshot, and every use checks it again against the store (a revoked key, a deactivated user or a
 * lost membership ends the tokens at once): an OAuth token never acts with more than its identity holds now.
 * A grant for one MCP server is narrowed to that server's workspace.
 */
export interface GrantSubject {
  via: "api_key" | "session";
  organisationId: string;
  workspaceId?: string;
  userId?: string;
  userEmail?: string;
  keyId?: string;
  /** sha256 of the API key, the lookup key authentication uses (never the key itself). */
  keyHash?: string;
}

export class SubjectRefused extends Error {}

/** The subject of an API key signing in, or SubjectRefused when it cannot reach the target. */
export async function subjectFromApiKey(services: Services, secret: string, target?: ResourceTarget) {
  const principal = await services.apiKeys.authenticate(secret);
  const subject: GrantSubject = {
    via: "api_key",
    organisationId: principal.organisationId,
    workspaceId: principal.workspaceId,
    userId: principal.userId,
    userEmail: principal.userEmail,
    keyId: principal.keyId,
    keyHash: sha256Hex(secret),
  };
  return narrowToTarget(services.stores.records, subject, principal, target);
}

/** The subject of an SSO session (its cookie), or SubjectRefused when it cannot reach the target. */
export async function subjectFromSession(
  services: Services,
  sessionId: string,
  origin: string,
  target?: ResourceTarget,
): Promise<{ subject: GrantSubject; principal: Principal }> {
  const records = services.stores.records;
  const principal = await authenticateSession(records, sessionId, { method: "GET", origin, headers: new Headers() });
  const subject: GrantSubject = {
    via: "session",
    organisationId: principal.organisationId,
    userId: principal.userId,
    userEmail: principal.userEmail,
  };
  return narrowToTarget(records, subject, principal, target);
}

async function narrowToTarget(
  records: Records,
  subject: GrantSubject,
  principal: Principal,
  target: ResourceTarget | undefined,
): Promise<{ subject: GrantSubject; principal: Principal }> {
  if (target?.kind !== "server") return { subject, principal };
  const server = target.server;
  if (server.organisationId !== subject.organisationId) {
    throw new SubjectRefused("This identity belongs to another organisation than the MCP server.");
  }
  if (subject.via === "api_key") {
    if (principal.workspaceId && principal.workspaceId !== server.workspaceId) {
      throw new SubjectRefused("This API key cannot reach the MCP server's workspace.");
    }
  } else if (!(await sessionReaches(records, principal, server.workspaceId))) {
    throw new SubjectRefused("You are not a member of the MCP server's workspace.");
  }
  return { subject: { ...subject, workspaceId: server.workspaceId }, principal };
}

const elevated = (role: OrganisationRole | undefined) => role === "owner" || role === "admin";

async function sessionReaches(records: Records, principal: Principal, workspaceId: string): Promise<boolean> {
  if (elevated(principal.organisationRole)) return true;
  return principal.userId !== undefined && (await getMembership(records, workspaceId, principal.userId)) !== undefined;
}

/**
 * The principal a token of this subject acts as now, or undefined when the identity is gone (key revoked or
 * expired, user deactivated or removed, membership lost).
 */
export async function currentPrincipal(records: Records, subject: GrantSubject): Promise<Principal | undefined> {
  if (subject.via === "api_key") {
    const lookup = subject.keyHash ? await readApiKeyLookup(records, subject.keyHash) : undefined;
    if (lookup?.status !== "active") return undefined;
    if (typeof lookup.expiresAt === "number" && lookup.expiresAt * 1000 <= Date.now()) return undefined;
    const key = lookup.principal;
    if (key.organisationId !== subject.organisationId) return undefined;
    if (subject.workspaceId && key.workspaceId && key.workspaceId !== subject.workspaceId) return undefined;
    return { ...key, kind: "oauth", workspaceId: subject.workspaceId ?? key.workspaceId };
  }
  if (!subject.userId) return undefined;
  const user = await findUser(records, subject.organisationId, subject.userId);
  if (!user || user.active === false) return undefined;
  const organisationRole = (user.role as OrganisationRole | undefined) ?? "member";
  let workspaceRole: Principal["workspaceRole"];
  if (subject.workspaceId) {
    const membership = await getMembership(records, subject.workspaceId, user.id);
    if (!membership && !elevated(organisationRole)) return undefined;
    workspaceRole = membership?.role;
  }
  return {
    kind: "oauth",
    organisationId: subject.organisationId,
    workspaceId: subject.workspaceId,
    userId: user.id,
    userEmail: user.email,
    organisationRole,
    workspaceRole,
    scopes: elevated(organisationRole) ? ["*"] : [],
  };
}

import type { Principal } from "../../auth/principal.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { Conflict } from "../../control/errors.ts";
import { removeUserMemberships } from "../../control/workspaces/members.ts";
import { deleteUserRecord } from "../../control/users/service.ts";
import { type User, normaliseEmail, presentUser, userStore } from "../../control/users/store.ts";
import { ScimError, USER_SCHEMA } from "./errors.ts";
import { type ScimListQuery, listResponse } from "./listing.ts";
import { PatchError, type PatchOperation, applyPatch } from "./patch.ts";
import { reconcileUser } from "./provisioning.ts";
import { listAll, scimGroupStore } from "./records.ts";

/**
 * SCIM Users (RFC 7643 4.1) are the gateway's users (core/control/users/store.ts): userName is the email, the
 * SCIM-only attributes (externalId, active, emails) live on the user record. New users get the organisation
 * role `member`; their workspaces come from group mappings (provisioning.ts). Deactivating (`active: false`)
 * revokes their keys and removes every membership; reactivating restores the mapped ones.
 */

export interface ScimDeps extends ControlDeps {
  /** Where resources live, for `meta.location` (`https://host/scim/v2`). */
  baseUrl: string;
  /** Revokes every active key of a user (core/control/api-keys/service.ts). */
  revokeUserKeys(organisationId: string, userId: string): Promise<string[]>;
}

interface ScimEmail {
  value: string;
  type?: string;
  primary?: boolean;
}

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function toScimUser(user: User, baseUrl: string) {
  const emails = (user.emails as ScimEmail[] | undefined) ?? [{ value: user.email, type: "work", primary: true }];
  return {
    schemas: [USER_SCHEMA],
    id: user.id,
    ...(user.external_id ? { externalId: user.external_id as string } : {}),
    userName: user.email,
    name: {
      ...(user.first_name ? { givenName: user.first_name } : {}),
      ...(user.last_name ? { familyName: user.last_name } : {}),
      ...(user.name ? { formatted: user.name } : {}),
    },
    ...(user.name ? { displayName: user.name } : {}),
    emails,
    active: user.active !== false,
    meta: {
      resourceType: "User",
      created: iso(user.createdAt),
      lastModified: iso(user.updatedAt),
      location: `${baseUrl}/Users/${user.id}`,
      version: `W/"${user.version}"`,
    },
  };
}

export type ScimUser = ReturnType<typeof toScimUser>;

const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === "object" && !Array.isArray(value);

function stringOrNull(value: unknown, param: string): string | null {
  if (value === undefined || value === null || value === "") return null;
  if (typeof value !== "string") throw new ScimError(400, `'${param}' must be a string.`, "invalidValue");
  return value;
}

/** The user-record fields a SCIM User representation stands for; ScimError 400 naming the bad attribute. */
export function userFieldsFrom(body: unknown): Partial<User> & { email: string } {
  if (!isObject(body)) throw new ScimError(400, "The body must be a SCIM User object.", "invalidSyntax");
  const userName = stringOrNull(body.userName, "userName");
  const rawEmails = body.emails;
  if (rawEmails !== undefined && rawEmails !== null && !Array.isArray(rawEmails))
    throw new ScimError(400, "'emails' must be an array.", "invalidValue");
  const emails: ScimEmail[] = [];
  for (const [index, entry] of (rawEmails ?? []).entries()) {
    if (!isObject(entry) || typeof entry.value !== "string")
      throw new ScimError(400, `'emails[${index}].value' must be a string.`, "invalidValue");
    emails.push({
      value: entry.value,
      ...(typeof entry.type === "string" ? { type: entry.type } : {}),
      ...(entry.primary === true || entry.primary === "True" || entry.primary === "true" ? { primary: true } : {}),
    });
  }
  // userName is the email; an IdP whose userName is not one (a UPN without mail) sends the mail in emails.
  const primary = emails.find((email) => email.primary) ?? emails[0];
  const email = userName && EMAIL.test(userName) ? userName : primary?.value;
  if (!userName) throw new ScimError(400, "'userName' is required.", "invalidValue");
  if (!email || !EMAIL.test(email))
    throw new ScimError(400, "'userName' (or a primary email) must be an email address.", "invalidValue");
  const name = isObject(body.name) ? body.name : {};
  const givenName = stringOrNull(name.givenName, "name.givenName");
  const familyName = stringOrNull(name.familyName, "name.familyName");
  const displayName =
    stringOrNull(body.displayName, "displayName") ??
    stringOrNull(name.formatted, "name.formatted") ??
    ([givenName, familyName].filter(Boolean).join(" ") || null);
  let active = true;
  if (body.active !== undefined && body.active !== null) {
    const raw = typeof body.active === "string" ? body.active.toLowerCase() : body.active;
    if (raw !== true && raw !== false && raw !== "true" && raw !== "false")
      throw new ScimError(400, "'active' must be a boolean.", "invalidValue");
    active = raw === true || raw === "true";
  }
  const normalised = normaliseEmail(email);
  return {
    email: normalised,
    slug: normalised,
    first_name: givenName,
    last_name: familyName,
    name: displayName,
    external_id: stringOrNull(body.externalId, "externalId"),
    emails: emails.length > 0 ? emails : undefined,
    active,
  };
}

async function loadUser(deps: ScimDeps, principal: Principal, id: string): Promise<User> {
  const store = userStore(deps.records);
  const user = store.isId(id) ? await store.get(principal.organisationId, id) : undefined;
  if (!user) throw new ScimError(404, `User ${id} not found.`);
  return user;
}

export async function listScimUsers(deps: ScimDeps, principal: Principal, query: ScimListQuery) {
  const users = await listAll(userStore(deps.records), principal.organisationId);
  return listResponse(
    users.map((user) => toScimUser(user, deps.baseUrl)),
    query,
  );
}

export async function getScimUser(deps: ScimDeps, principal: Principal, id: string) {
  return toScimUser(await loadUser(deps, principal, id), deps.baseUrl);
}

export async function createScimUser(deps: ScimDeps, principal: Principal, body: unknown) {
  const fields = userFieldsFrom(body);
  const store = userStore(deps.records);
  if (await store.get(principal.organisationId, fields.email))
    throw new ScimError(409, `A user with userName '${fields.email}' already exists.`, "uniqueness");
  let user: User;
  try {
    user = await store.create(principal.organisationId, { ...fields, role: "member" } as Omit<
      User,
      "id" | "organisationId" | "version" | "createdAt" | "updatedAt"
    >);
  } catch (error) {
    if (error instanceof Conflict)
      throw new ScimError(409, `A user with userName '${fields.email}' already exists.`, "uniqueness");
    throw error;
  }
  await audit(deps, principal, {
    action: "create",
    resourceType: "user",
    resourceId: user.id,
    after: { ...presentUser(user), source: "scim", external_id: user.external_id ?? null, active: true },
  });
  return toScimUser(user, deps.baseUrl);
}

/** Writes the new fields, audits, and applies what `active` changes to access. */
async function saveUser(deps: ScimDeps, principal: Principal, current: User, fields: Partial<User>, action: string) {
  let updated: User;
  try {
    updated = await userStore(deps.records).update(current, fields);
  } catch (error) {
    if (error instanceof Conflict) throw new ScimError(409, error.message, "uniqueness");
    throw error;
  }
  const wasActive = current.active !== false;
  const isActive = updated.active !== false;
  let revokedApiKeys: string[] = [];
  if (wasActive && !isActive) {
    // Deactivation: keys first, so they stop working even if a later step fails; then every membership.
    revokedApiKeys = await deps.revokeUserKeys(principal.organisationId, updated.id);
    await removeUserMemberships(deps.records, updated.id);
    updated = await userStore(deps.records).update(updated, { scim_workspaces: [] });
  }
  await audit(deps, principal, {
    action: wasActive && !isActive ? "deactivate" : !wasActive && isActive ? "reactivate" : action,
    resourceType: "user",
    resourceId: updated.id,
    before: { ...presentUser(current), active: wasActive },
    after: { ...presentUser(updated), active: isActive, source: "scim", revoked_api_keys: revokedApiKeys },
  });
  if (isActive && !wasActive) await reconcileUser(deps, principal, updated.id);
  const fresh = await userStore(deps.records).get(principal.organisationId, updated.id);
  return toScimUser(fresh ?? updated, deps.baseUrl);
}

export async function replaceScimUser(deps: ScimDeps, principal: Principal, id: string, body: unknown) {
  const current = await loadUser(deps, principal, id);
  return saveUser(deps, principal, current, userFieldsFrom(body), "update");
}

export async function patchScimUser(deps: ScimDeps, principal: Principal, id: string, operations: PatchOperation[]) {
  const current = await loadUser(deps, principal, id);
  let patched: Record<string, unknown>;
  try {
    patched = applyPatch(toScimUser(current, deps.baseUrl), operations);
  } catch (error) {
    if (error instanceof PatchError) throw new ScimError(400, error.message, error.scimType);
    throw error;
  }
  // A patched primary email does not rename the user; userName does.
  const fields = userFieldsFrom(patched);
  return saveUser(deps, principal, current, fields, "update");
}

/** Deletes the user: keys, memberships, group memberships, then the record. */
export async function deleteScimUser(deps: ScimDeps, principal: Principal, id: string): Promise<void> {
  const user = await loadUser(deps, principal, id);
  const revokedApiKeys = await deps.revokeUserKeys(principal.organisationId, user.id);
  await removeUserMemberships(deps.records, user.id);
  const groups = scimGroupStore(deps.records);
  for (const group of await listAll(groups, principal.organisationId, (g) =>
    g.members.some((member) => member.value === user.id),
  )) {
    await groups.update(group, { members: group.members.filter((member) => member.value !== user.id) });
  }
  await deleteUserRecord(deps, principal, user, { revoked_api_keys: revokedApiKeys, source: "scim" });
}

import type { Principal } from "../../auth/principal.ts";
import { type ControlDeps, audit } from "../../control/deps.ts";
import { Conflict } from "../../control/errors.ts";
import { userStore } from "../../control/users/store.ts";
import { GROUP_SCHEMA, ScimError } from "./errors.ts";
import { type ScimListQuery, listResponse } from "./listing.ts";
import { PatchError, type PatchOperation, applyPatch } from "./patch.ts";
import { reconcileUser } from "./provisioning.ts";
import { type ScimGroup, type ScimMember, groupSlug, listAll, scimGroupStore } from "./records.ts";
import type { ScimDeps } from "./users.ts";

/**
 * SCIM Groups (RFC 7643 4.2): displayName (unique per organisation, case-insensitive), externalId and members
 * (user ids of the organisation). A change of members re-provisions the users who joined or left
 * (provisioning.ts), so group mappings follow at once.
 */

const iso = (seconds: number) => new Date(seconds * 1000).toISOString();
const isObject = (value: unknown): value is Record<string, unknown> =>
  !!value && typeof value === "object" && !Array.isArray(value);

export function toScimGroup(group: ScimGroup, baseUrl: string, withMembers = true) {
  return {
    schemas: [GROUP_SCHEMA],
    id: group.id,
    displayName: group.displayName,
    ...(group.externalId ? { externalId: group.externalId } : {}),
    ...(withMembers
      ? {
          members: group.members.map((member) => ({
            value: member.value,
            ...(member.display ? { display: member.display } : {}),
            $ref: `${baseUrl}/Users/${member.value}`,
          })),
        }
      : {}),
    meta: {
      resourceType: "Group",
      created: iso(group.createdAt),
      lastModified: iso(group.updatedAt),
      location: `${baseUrl}/Groups/${group.id}`,
      version: `W/"${group.version}"`,
    },
  };
}

const presentForAudit = (group: ScimGroup) => ({
  id: group.id,
  display_name: group.displayName,
  external_id: group.externalId ?? null,
  members: group.members.map((member) => member.value),
});

/** displayName, externalId and members of a SCIM Group body; members must be users of the organisation. */
async function groupFieldsFrom(deps: ControlDeps, principal: Principal, body: unknown) {
  if (!isObject(body)) throw new ScimError(400, "The body must be a SCIM Group object.", "invalidSyntax");
  const displayName = body.displayName;
  if (typeof displayName !== "string" || displayName.trim() === "")
    throw new ScimError(400, "'displayName' is required.", "invalidValue");
  if (body.externalId != null && typeof body.externalId !== "string")
    throw new ScimError(400, "'externalId' must be a string.", "invalidValue");
  const raw = body.members ?? [];
  if (!Array.isArray(raw)) throw new ScimError(400, "'members' must be an array.", "invalidValue");
  const members: ScimMember[] = [];
  const users = userStore(deps.records);
  for (const [index, entry] of raw.entries()) {
    const value = isObject(entry) ? entry.value : undefined;
    if (typeof value !== "string")
      throw new ScimError(400, `'members[${index}].value' must be a string.`, "invalidValue");
    if (members.some((member) => member.value === value)) continue;
    // Only this organisation's users: another organisation's user id is as unknown as a made-up one.
    const user = users.isId(value) ? await users.get(principal.organisationId, value) : undefined;
    if (!user) throw new ScimError(400, `'members[${index}].value': no user ${value}.`, "invalidValue");
    const display = isObject(entry) && typeof entry.display === "string" ? entry.display : user.email;
    members.push({ value, display });
  }
  return {
    displayName: displayName.trim(),
    slug: groupSlug(displayName),
    externalId: (body.externalId as string | undefined) ?? null,
    members,
  };
}

async function loadGroup(deps: ControlDeps, principal: Principal, id: string): Promise<ScimGroup> {
  const store = scimGroupStore(deps.records);
  const group = store.isId(id) ? await store.get(principal.organisationId, id) : undefined;
  if (!group) throw new ScimError(404, `Group ${id} not found.`);
  return group;
}

const uniqueness = (displayName: string) =>
  new ScimError(409, `A group with displayName '${displayName}' already exists.`, "uniqueness");

/** Re-provisions everyone who was or is a member. */
async function reconcileMembers(deps: ControlDeps, principal: Principal, before: ScimMember[], after: ScimMember[]) {
  const ids = new Set([...before, ...after].map((member) => member.value));
  for (const id of ids) await reconcileUser(deps, principal, id);
}

export async function listScimGroups(
  deps: ScimDeps,
  principal: Principal,
  query: ScimListQuery & { excludedAttributes?: string },
) {
  const withMembers = !/(^|,)\s*members\s*(,|$)/i.test(query.excludedAttributes ?? "");
  const groups = await listAll(scimGroupStore(deps.records), principal.organisationId);
  return listResponse(
    groups.map((group) => toScimGroup(group, deps.baseUrl, withMembers)),
    query,
  );
}

export async function getScimGroup(deps: ScimDeps, principal: Principal, id: string, excludedAttributes?: string) {
  const withMembers = !/(^|,)\s*members\s*(,|$)/i.test(excludedAttributes ?? "");
  return toScimGroup(await loadGroup(deps, principal, id), deps.baseUrl, withMembers);
}

export async function createScimGroup(deps: ScimDeps, principal: Principal, body: unknown) {
  const fields = await groupFieldsFrom(deps, principal, body);
  let group: ScimGroup;
  try {
    group = await scimGroupStore(deps.records).create(principal.organisationId, fields);
  } catch (error) {
    if (error instanceof Conflict) throw uniqueness(fields.displayName);
    throw error;
  }
  await audit(deps, principal, {
    action: "create",
    resourceType: "scim_group",
    resourceId: group.id,
    after: presentForAudit(group),
  });
  await reconcileMembers(deps, principal, [], group.members);
  return toScimGroup(group, deps.baseUrl);
}

async function saveGroup(deps: ScimDeps, principal: Principal, current: ScimGroup, body: unknown) {
  const fields = await groupFieldsFrom(deps, principal, body);
  let updated: ScimGroup;
  try {
    updated = await scimGroupStore(deps.records).update(current, fields);
  } catch (error) {
    if (error instanceof Conflict && fields.slug !== current.slug) throw uniqueness(fields.displayName);
    if (error instanceof Conflict) throw new ScimError(409, error.message);
    throw error;
  }
  await audit(deps, principal, {
    action: "update",
    resourceType: "scim_group",
    resourceId: updated.id,
    before: presentForAudit(current),
    after: presentForAudit(updated),
  });
  // A rename can make by-name mappings match or stop matching: everyone is re-provisioned then.
  await reconcileMembers(deps, principal, current.members, updated.members);
  return updated;
}

export async function replaceScimGroup(deps: ScimDeps, principal: Principal, id: string, body: unknown) {
  const current = await loadGroup(deps, principal, id);
  return toScimGroup(await saveGroup(deps, principal, current, body), deps.baseUrl);
}

/** Answers the group, or undefined when the caller should answer 204 (RFC 7644 3.5.2: either is allowed). */
export async function patchScimGroup(deps: ScimDeps, principal: Principal, id: string, operations: PatchOperation[]) {
  const current = await loadGroup(deps, principal, id);
  let patched: Record<string, unknown>;
  try {
    patched = applyPatch(toScimGroup(current, deps.baseUrl), operations);
  } catch (error) {
    if (error instanceof PatchError) throw new ScimError(400, error.message, error.scimType);
    throw error;
  }
  return toScimGroup(await saveGroup(deps, principal, current, patched), deps.baseUrl);
}

export async function deleteScimGroup(deps: ScimDeps, principal: Principal, id: string): Promise<void> {
  const group = await loadGroup(deps, principal, id);
  await scimGroupStore(deps.records).delete(group);
  await audit(deps, principal, {
    action: "delete",
    resourceType: "scim_group",
    resourceId: group.id,
    before: presentForAudit(group),
  });
  await reconcileMembers(deps, principal, group.members, []);
}

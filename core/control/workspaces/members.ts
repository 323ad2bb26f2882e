import type { WorkspaceRole } from "../../auth/principal.ts";
import { ConditionFailedError, type Page, type RecordItem, type Records } from "../../store/ports.ts";
import { Conflict } from "../errors.ts";

/**
 * Workspace membership, one per (workspace, user), as two single-item records:
 * - pk `WORKSPACE#<ws>`, sk `MEMBER#<user>`: authoritative (getMembership reads it; a workspace's members are
 *   one query of its partition);
 * - pk `USER#<user>`, sk `MEMBER#<ws>`: the reverse, so a user's workspaces are one query.
 * Writes go forward first, then reverse; deletes the same order. After a crash between the two, the reverse
 * may hold a stale entry: callers that need certainty check `getMembership`.
 */

export interface Membership {
  organisationId: string;
  workspaceId: string;
  userId: string;
  role: WorkspaceRole;
  createdAt: number;
  updatedAt: number;
}

const forwardKey = (workspaceId: string, userId: string) => ({
  pk: `WORKSPACE#${workspaceId}`,
  sk: `MEMBER#${userId}`,
});
const reverseKey = (workspaceId: string, userId: string) => ({ pk: `USER#${userId}`, sk: `MEMBER#${workspaceId}` });

function toMembership(item: RecordItem): Membership {
  return {
    organisationId: item.organisationId as string,
    workspaceId: item.workspaceId as string,
    userId: item.userId as string,
    role: item.role as WorkspaceRole,
    createdAt: item.createdAt as number,
    updatedAt: item.updatedAt as number,
  };
}

/** The user's membership of the workspace, or undefined. `records` is the Records store. */
export async function getMembership(
  records: Records,
  workspaceId: string,
  userId: string,
): Promise<Membership | undefined> {
  const { pk, sk } = forwardKey(workspaceId, userId);
  const item = await records.get(pk, sk);
  return item ? toMembership(item) : undefined;
}

/** Every workspace the user belongs to (from the reverse records). */
export async function listUserWorkspaces(records: Records, userId: string): Promise<Membership[]> {
  const out: Membership[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ partition: `USER#${userId}`, prefix: "MEMBER#", limit: 1000, cursor });
    out.push(...page.items.map(toMembership));
    cursor = page.cursor;
  } while (cursor);
  return out;
}

/** One page of a workspace's members, in user-id order. The cursor is the store's (RangeError when malformed). */
export async function listMembers(
  records: Records,
  workspaceId: string,
  limit: number,
  cursor?: string,
): Promise<Page<Membership>> {
  const page = await records.query({ partition: `WORKSPACE#${workspaceId}`, prefix: "MEMBER#", limit, cursor });
  return { items: page.items.map(toMembership), cursor: page.cursor };
}

/** Adds a member; Conflict when the user already belongs to the workspace. */
export async function addMembership(
  records: Records,
  input: Omit<Membership, "createdAt" | "updatedAt">,
): Promise<Membership> {
  const now = Math.floor(Date.now() / 1000);
  const membership: Membership = { ...input, createdAt: now, updatedAt: now };
  try {
    await records.put({ ...forwardKey(input.workspaceId, input.userId), ...membership }, { exists: false });
  } catch (error) {
    if (error instanceof ConditionFailedError)
      throw new Conflict(`User '${input.userId}' is already a member of this workspace.`, { param: "user_id" });
    throw error;
  }
  await records.put({ ...reverseKey(input.workspaceId, input.userId), ...membership });
  return membership;
}

export async function updateMembershipRole(
  records: Records,
  current: Membership,
  role: WorkspaceRole,
): Promise<Membership> {
  const next: Membership = { ...current, role, updatedAt: Math.floor(Date.now() / 1000) };
  await records.put({ ...forwardKey(current.workspaceId, current.userId), ...next }, { exists: true });
  await records.put({ ...reverseKey(current.workspaceId, current.userId), ...next });
  return next;
}

export async function removeMembership(records: Records, workspaceId: string, userId: string): Promise<void> {
  const forward = forwardKey(workspaceId, userId);
  const reverse = reverseKey(workspaceId, userId);
  await records.delete(forward.pk, forward.sk);
  await records.delete(reverse.pk, reverse.sk);
}

/** Removes every member of a workspace (workspace deletion). */
export async function removeAllMembers(records: Records, workspaceId: string): Promise<void> {
  for (;;) {
    const page = await listMembers(records, workspaceId, 1000);
    for (const member of page.items) await removeMembership(records, workspaceId, member.userId);
    if (!page.cursor || page.items.length === 0) return;
  }
}

/** Removes a user from every workspace (user deletion). */
export async function removeUserMemberships(records: Records, userId: string): Promise<void> {
  for (const membership of await listUserWorkspaces(records, userId)) {
    await removeMembership(records, membership.workspaceId, userId);
  }
}

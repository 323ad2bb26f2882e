import type { Principal } from "../../../auth/principal.ts";
import { managesWorkspace } from "../../../auth/scopes.ts";
import { Forbidden, Invalid } from "../../../control/errors.ts";
import { type McpAdminDeps, loadServer } from "../admin-access.ts";
import { integrationOpenTo, mcpIntegrationStore, mcpServerStore, userMayUse } from "../records.ts";
import type { UserAccessUpdateBody } from "./schemas.ts";
import { serverChanged } from "./service.ts";

/**
 * Who may use an MCP server (`/v1/mcp-servers/:id/user-access`): an entry per user (enabled or not) over the
 * server's `default_user_access`. The MCP endpoint applies records.ts `userMayUse`; the check route answers it for
 * the calling user. Changing the list is for those who manage the server's workspace.
 */

const MAX_ENTRIES = 10_000;

function present(server: {
  id: string;
  default_user_access: string;
  user_access: Array<{ user_id: string; enabled: boolean }>;
}) {
  return {
    id: server.id,
    default_user_access: server.default_user_access,
    user_access: server.user_access.map((entry) => ({ user_id: entry.user_id, enabled: entry.enabled })),
    total: server.user_access.length,
  };
}

export async function getUserAccess(deps: McpAdminDeps, principal: Principal, ref: string) {
  return present(await loadServer(deps, principal, ref));
}

/** Entries merge by user (a user named again is replaced); `default_user_access` applies to everyone else. */
export async function updateUserAccess(
  deps: McpAdminDeps,
  principal: Principal,
  ref: string,
  input: UserAccessUpdateBody,
) {
  const current = await loadServer(deps, principal, ref);
  if (!managesWorkspace(principal, current.workspaceId))
    throw new Forbidden("Only a manager of the server's workspace may change who uses it.", {
      code: "workspace_manager_required",
    });
  const entries = new Map(current.user_access.map((entry) => [entry.user_id, entry]));
  for (const entry of input.user_access ?? []) {
    const userId = (entry.user_id ?? entry.id)!;
    entries.set(userId, { user_id: userId, enabled: entry.enabled });
  }
  if (entries.size > MAX_ENTRIES)
    throw new Invalid(`A server holds at most ${MAX_ENTRIES} user access entries.`, { param: "user_access" });
  const updated = await mcpServerStore(deps.records).update(current, {
    user_access: [...entries.values()],
    ...(input.default_user_access ? { default_user_access: input.default_user_access } : {}),
  });
  await serverChanged(deps, principal, "update_user_access", current, updated);
  return present(updated);
}

/** May the calling user use the server now, and why. A service key acts for no user: the default decides. */
export async function checkUserAccess(deps: McpAdminDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  const integration = await mcpIntegrationStore(deps.records).get(principal.organisationId, server.mcp_integration_id);
  const base = { id: server.id, user_id: principal.userId ?? null };
  if (!integration || !integrationOpenTo(integration, server.workspaceId))
    return { ...base, allowed: false, reason: "The server's MCP integration is no longer available to its workspace." };
  const entry = principal.userId ? server.user_access.find((access) => access.user_id === principal.userId) : undefined;
  const allowed = userMayUse(server, principal.userId);
  const reason = entry
    ? entry.enabled
      ? "The user is allowed explicitly."
      : "The user is denied explicitly."
    : allowed
      ? "Allowed by the server's default user access."
      : "Denied by the server's default user access.";
  return { ...base, allowed, reason };
}

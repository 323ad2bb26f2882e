import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide } from "../../auth/scopes.ts";
import type { ControlDeps } from "../../control/deps.ts";
import { Forbidden, NotFound } from "../../control/errors.ts";
import type { Services } from "../../services.ts";
import {
  type McpIntegration,
  type McpServer,
  integrationOpenTo,
  mcpIntegrationStore,
  mcpServerStore,
} from "./records.ts";

/**
 * Who reaches which MCP integration and server through the admin API. An organisation-wide caller reaches all of
 * its organisation's; a workspace-bound one its workspace's servers, its workspace's own integrations and the
 * organisation-wide integrations open to its workspace (records.ts `integrationOpenTo`). Anything else is
 * NotFound, exactly like an id that names nothing.
 */

export interface McpAdminDeps extends ControlDeps {
  /** discoverUpstream and the upstream auth need the stores, the trusted hosts and the settings. */
  services: Services;
  /** Where the gateway is reached (GATEWAY_PUBLIC_URL, else the request's origin): a server's `url` is under it. */
  publicUrl: string;
}

export function integrationVisible(principal: Principal, integration: McpIntegration): boolean {
  if (isOrganisationWide(principal)) return true;
  return !!principal.workspaceId && integrationOpenTo(integration, principal.workspaceId);
}

/** A caller may change a workspace's own integration from that workspace; organisation-wide ones only organisation-wide. */
export function integrationWritable(principal: Principal, integration: McpIntegration): boolean {
  if (isOrganisationWide(principal)) return true;
  return !!integration.workspaceId && integration.workspaceId === principal.workspaceId;
}

export function serverVisible(principal: Principal, server: McpServer): boolean {
  if (isOrganisationWide(principal)) return true;
  return !!principal.workspaceId && server.workspaceId === principal.workspaceId;
}

const noIntegration = (ref: string) =>
  new NotFound(`No MCP integration '${ref}'.`, { code: "mcp_integration_not_found" });
const noServer = (ref: string) => new NotFound(`No MCP server '${ref}'.`, { code: "mcp_server_not_found" });

export async function loadIntegration(deps: ControlDeps, principal: Principal, ref: string): Promise<McpIntegration> {
  const integration = await mcpIntegrationStore(deps.records).get(principal.organisationId, ref);
  if (!integration || !integrationVisible(principal, integration)) throw noIntegration(ref);
  return integration;
}

export async function loadWritableIntegration(deps: ControlDeps, principal: Principal, ref: string) {
  const integration = await loadIntegration(deps, principal, ref);
  if (!integrationWritable(principal, integration))
    throw new Forbidden("Only an organisation-level caller may change an organisation-wide MCP integration.", {
      code: "admin_required",
    });
  return integration;
}

export async function loadServer(deps: ControlDeps, principal: Principal, ref: string): Promise<McpServer> {
  const server = await mcpServerStore(deps.records).get(principal.organisationId, ref);
  if (!server || !serverVisible(principal, server)) throw noServer(ref);
  return server;
}

/** The server and its integration (an integration deleted or closed to the workspace meanwhile is a 409). */
export async function loadServerWithIntegration(deps: ControlDeps, principal: Principal, ref: string) {
  const server = await loadServer(deps, principal, ref);
  const integration = await mcpIntegrationStore(deps.records).get(principal.organisationId, server.mcp_integration_id);
  if (!integration || !integrationOpenTo(integration, server.workspaceId)) {
    throw new NotFound(`MCP server '${ref}' has no integration available to its workspace.`, {
      code: "mcp_integration_not_found",
    });
  }
  return { server, integration };
}

/** Organisation-id fields of the SDK's bodies and queries: only the caller's own. */
export function assertOwnOrganisation(principal: Principal, organisationId: string | undefined): void {
  if (organisationId !== undefined && organisationId !== principal.organisationId)
    throw new Forbidden("This key cannot access another organisation.", { code: "organisation_forbidden" });
}

import type * as z from "zod";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { controlDeps } from "../control-deps.ts";
import { HttpError } from "../../http/errors.ts";
import { json, parseJsonWithinDepth, readText, validate } from "../../http/json.ts";
import { listResponse } from "../../http/lists.ts";
import type { McpAdminDeps } from "../../features/mcp/admin-access.ts";
import * as integrations from "../../features/mcp/integrations/service.ts";
import {
  capabilitySwitchesSchema,
  mcpIntegrationCreateSchema,
  mcpIntegrationListQuery,
  mcpIntegrationSyncSchema,
  mcpIntegrationUpdateSchema,
  mcpWorkspacesUpdateSchema,
} from "../../features/mcp/integrations/schemas.ts";
import * as connections from "../../features/mcp/servers/connections.ts";
import * as userAccess from "../../features/mcp/servers/user-access.ts";
import {
  connectionsQuery,
  mcpServerCreateSchema,
  mcpServerListQuery,
  mcpServerUpdateSchema,
  serverCapabilitiesSchema,
  serverCapabilitiesSyncSchema,
  serverMetadataSchema,
  tokensSetSchema,
  userAccessUpdateSchema,
} from "../../features/mcp/servers/schemas.ts";
import * as servers from "../../features/mcp/servers/service.ts";

/**
 * The MCP control plane (`/v1/mcp-integrations`, `/v1/mcp-servers`: the portkey-ai SDK's `mcpIntegrations.*` and
 * `mcpServers.*`): parse, call the services under core/features/mcp, shape the answer. A sync that could not read the
 * upstream answers 502 with the reason (already stored on the integration).
 */

const deps = (request: Request, ctx: RequestContext): McpAdminDeps => ({
  ...controlDeps(ctx),
  services: ctx.services,
  publicUrl: ctx.services.settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin,
});
const id = (ctx: RequestContext) => ctx.params.id!;
const queryOf = (request: Request) => Object.fromEntries(new URL(request.url).searchParams);

/** A JSON body that may be absent or empty (`POST /sync` pulls from the upstream then). */
async function optionalBody<T extends z.ZodType>(
  request: Request,
  ctx: RequestContext,
  schema: T,
): Promise<z.output<T>> {
  const contentType = request.headers.get("content-type");
  if (contentType && !/^application\/([\w.+-]*\+)?json\b/i.test(contentType)) {
    throw new HttpError(415, `Unsupported content type '${contentType}'; send application/json.`, {
      code: "unsupported_media_type",
    });
  }
  const text = await readText(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const value = text.trim() === "" ? {} : parseJsonWithinDepth(text, null, "The request body");
  return validate(schema, value) as z.output<T>;
}

const body = <T extends z.ZodType>(request: Request, ctx: RequestContext, schema: T) =>
  optionalBody(request, ctx, schema);

/** Portkey's page-number paging: `current_page` from 0, `page_size` (default 100). */
function paging(query: { page_size?: number; current_page?: number }) {
  const limit = query.page_size ?? 100;
  return { limit, offset: (query.current_page ?? 0) * limit };
}

function syncAnswer(outcome: { ok: boolean; error?: string; body: Record<string, unknown> }): Response {
  if (outcome.ok) return json(outcome.body);
  throw new HttpError(502, `Could not sync with the MCP server: ${outcome.error}`, { code: "mcp_sync_failed" });
}

export const handlers: HandlerMap = {
  // --- integrations ---
  async createMcpIntegration(request, ctx) {
    const input = await body(request, ctx, mcpIntegrationCreateSchema);
    return json(await integrations.createIntegration(deps(request, ctx), ctx.principal!, input), { status: 201 });
  },
  async listMcpIntegrations(request, ctx) {
    const query = validate(mcpIntegrationListQuery, queryOf(request));
    const page = await integrations.listIntegrations(deps(request, ctx), ctx.principal!, {
      ...query,
      ...paging(query),
    });
    return listResponse(page);
  },
  async getMcpIntegration(request, ctx) {
    return json(await integrations.getIntegration(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpIntegration(request, ctx) {
    const input = await body(request, ctx, mcpIntegrationUpdateSchema);
    return json(await integrations.updateIntegration(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async deleteMcpIntegration(request, ctx) {
    return json(await integrations.deleteIntegration(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async syncMcpIntegration(request, ctx) {
    const input = await body(request, ctx, mcpIntegrationSyncSchema);
    return syncAnswer(await integrations.syncIntegration(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async testMcpIntegration(request, ctx) {
    return json(await integrations.testIntegration(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async getMcpIntegrationWorkspaces(request, ctx) {
    return json(await integrations.getWorkspaces(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpIntegrationWorkspaces(request, ctx) {
    const input = await body(request, ctx, mcpWorkspacesUpdateSchema);
    return json(await integrations.updateWorkspaces(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async getMcpIntegrationCapabilities(request, ctx) {
    return json(await integrations.getCapabilities(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpIntegrationCapabilities(request, ctx) {
    const input = await body(request, ctx, capabilitySwitchesSchema);
    return json(await integrations.updateCapabilities(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async getMcpIntegrationMetadata(request, ctx) {
    return json(await integrations.getMetadata(deps(request, ctx), ctx.principal!, id(ctx)));
  },

  // --- servers ---
  async createMcpServer(request, ctx) {
    const input = await body(request, ctx, mcpServerCreateSchema);
    return json(await servers.createServer(deps(request, ctx), ctx.principal!, input), { status: 201 });
  },
  async listMcpServers(request, ctx) {
    const query = validate(mcpServerListQuery, queryOf(request));
    return listResponse(await servers.listServers(deps(request, ctx), ctx.principal!, { ...query, ...paging(query) }));
  },
  async getMcpServer(request, ctx) {
    return json(await servers.getServer(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpServer(request, ctx) {
    const input = await body(request, ctx, mcpServerUpdateSchema);
    return json(await servers.updateServer(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async deleteMcpServer(request, ctx) {
    return json(await servers.deleteServer(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async testMcpServer(request, ctx) {
    return json(await servers.testServer(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async getMcpServerCapabilities(request, ctx) {
    return json(await servers.getServerCapabilities(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpServerCapabilities(request, ctx) {
    const input = await body(request, ctx, serverCapabilitiesSchema);
    return json(await servers.updateServerCapabilities(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async syncMcpServerCapabilities(request, ctx) {
    await body(request, ctx, serverCapabilitiesSyncSchema);
    return syncAnswer(await servers.syncServerCapabilities(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async checkMcpServerUserAccess(request, ctx) {
    return json(await userAccess.checkUserAccess(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async getMcpServerUserAccess(request, ctx) {
    return json(await userAccess.getUserAccess(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async updateMcpServerUserAccess(request, ctx) {
    const input = await body(request, ctx, userAccessUpdateSchema);
    return json(await userAccess.updateUserAccess(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async getMcpServerMetadata(request, ctx) {
    return json(await servers.getServerMetadata(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async syncMcpServerMetadata(request, ctx) {
    const input = await body(request, ctx, serverMetadataSchema);
    return syncAnswer(await servers.syncServerMetadata(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async getMcpServerTokens(request, ctx) {
    return json(await connections.getTokens(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async setMcpServerTokens(request, ctx) {
    const input = await body(request, ctx, tokensSetSchema);
    return json(await connections.setTokens(deps(request, ctx), ctx.principal!, id(ctx), input));
  },
  async deleteMcpServerTokens(request, ctx) {
    return json(await connections.deleteTokens(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async getMcpServerClientInfo(request, ctx) {
    return json(await connections.getClientInfo(deps(request, ctx), ctx.principal!, id(ctx)));
  },
  async listMcpServerConnections(request, ctx) {
    const query = validate(connectionsQuery, queryOf(request));
    const page = await connections.listConnections(deps(request, ctx), ctx.principal!, id(ctx), {
      ...query,
      ...paging(query),
    });
    return listResponse(page);
  },
  async deleteMcpServerConnection(request, ctx) {
    const query = validate(connectionsQuery, queryOf(request));
    return json(await connections.deleteConnection(deps(request, ctx), ctx.principal!, id(ctx), query));
  },
};

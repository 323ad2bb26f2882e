import type { HandlerMap } from "../../http/context.ts";
import { badRequest } from "../../http/errors.ts";
import { json } from "../../http/json.ts";
import { loadOnce } from "../../util/load-once.ts";

/** The MCP endpoint, loaded with the first MCP request and kept (not a dynamic import per request). */
const mcpEndpoint = loadOnce(() => import("../../features/mcp/endpoint/endpoint.ts"));

/** The MCP gateway (core/features/mcp): its modules load on first use, so this family's cold start stays small. */
export const handlers: HandlerMap = {
  async mcpEndpoint(request, ctx) {
    const { serveMcpRequest } = await mcpEndpoint.get();
    return serveMcpRequest(request, ctx);
  },

  /** `GET /v0.1/servers`: the MCP registry API's server list (core/features/mcp/endpoint/registry.ts). */
  async registryServers(request, ctx) {
    const query = registryQuery(new URL(request.url).searchParams);
    const [{ listRegistryServers }, { publicBase }] = await Promise.all([
      import("../../features/mcp/endpoint/registry.ts"),
      import("../../features/mcp/endpoint/caller.ts"),
    ]);
    try {
      return json(await listRegistryServers(ctx.services, ctx.principal!, query, publicBase(request, ctx.services)));
    } catch (error) {
      if (error instanceof RangeError) throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
      throw error;
    }
  },
};

/** The registry API's list parameters: `limit` (1 to 100, default 30), `cursor`, `search` (name substring). */
function registryQuery(params: URLSearchParams): { limit: number; cursor?: string; search?: string } {
  const rawLimit = params.get("limit");
  const limit = rawLimit === null ? 30 : Number(rawLimit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    throw badRequest("limit must be an integer from 1 to 100.", "limit", "invalid_limit");
  }
  const cursor = params.get("cursor") ?? undefined;
  if (cursor !== undefined && cursor.length > 500) throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
  const search = params.get("search") ?? undefined;
  if (search !== undefined && search.length > 200) throw badRequest("search is too long.", "search");
  return { limit, cursor, search };
}

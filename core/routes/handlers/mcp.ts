import type { HandlerMap } from "../../http/context.ts";
import { json, validate } from "../../http/json.ts";
import * as z from "zod";

/** The MCP gateway (core/mcp): its modules load on first use, so this family's cold start stays small. */
export const handlers: HandlerMap = {
  async mcpEndpoint(request, ctx) {
    const { serveMcpRequest } = await import("../../mcp/endpoint.ts");
    return serveMcpRequest(request, ctx);
  },

  /** `GET /v0.1/servers`: the MCP registry API's server list (core/mcp/registry.ts). */
  async registryServers(request, ctx) {
    const query = validate(registryQuery, Object.fromEntries(new URL(request.url).searchParams));
    const [{ listRegistryServers }, { publicBase }] = await Promise.all([
      import("../../mcp/registry.ts"),
      import("../../mcp/caller.ts"),
    ]);
    try {
      return json(await listRegistryServers(ctx.services, ctx.principal!, query, publicBase(request, ctx.services)));
    } catch (error) {
      if (error instanceof RangeError) {
        const { badRequest } = await import("../../http/errors.ts");
        throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
      }
      throw error;
    }
  },
};

const registryQuery = z.looseObject({
  limit: z.coerce.number().int().min(1).max(100).default(30),
  cursor: z.string().max(500).optional(),
  search: z.string().max(200).optional(),
});

import type { GatewayRequestHeaders } from "../../../http/gateway-headers.ts";
import type { RequestContext } from "../../../services.ts";
import { HttpError } from "../../../http/errors.ts";
import { requireRouting } from "../../../inference/routing/source.ts";
import type { McpToolReference } from "./references.ts";

/**
 * What a tool loop needs before its first model call, for chat and Responses alike: the MCP gateway's tools,
 * a caller to run them as, and a routing config (the loop calls the model itself, step after step).
 */
export async function loopPrerequisites(
  gateway: GatewayRequestHeaders,
  references: McpToolReference[],
  ctx: RequestContext,
) {
  const host = ctx.services.mcpTools;
  const principal = ctx.principal;
  if (!host || !principal) {
    throw new HttpError(501, "Server-side MCP tools are not available on this gateway.", {
      code: "mcp_unavailable",
      param: `tools[${references[0]!.index}]`,
    });
  }
  const config = await requireRouting(gateway, ctx);
  return { host, principal, config };
}

import { badRequest } from "../../../http/errors.ts";
import type { GatewayRequestHeaders } from "../../../http/gateway-headers.ts";

/** The beta (spec 9) that lets a request name MCP tools the gateway runs itself. */
export const SERVER_SIDE_MCP_BETA = "server-side-mcp-2026-06-01";

/**
 * Whether a request opted into server-side MCP tools: `x-gateway-beta` (or its `x-portkey-beta` alias) lists the
 * beta, alone or among other comma-separated betas, in any letter case.
 */
export function optedIntoServerSideMcp(gateway: Pick<GatewayRequestHeaders, "beta">): boolean {
  return gateway.beta.some((beta) => beta.toLowerCase() === SERVER_SIDE_MCP_BETA);
}

/**
 * A second beta, beside the first: each whole server a request names also offers its enabled resources and
 * prompts to the model, as two context tools (`<server>__read_resource`, `<server>__get_prompt`).
 */
export const SERVER_SIDE_MCP_CONTEXT_BETA = "server-side-mcp-context-2026-11-28";

export function optedIntoMcpContext(gateway: Pick<GatewayRequestHeaders, "beta">): boolean {
  return gateway.beta.some((beta) => beta.toLowerCase() === SERVER_SIDE_MCP_CONTEXT_BETA);
}

/** Refuses (400 naming the first entry) server-side MCP tools in a request that did not opt into the beta. */
export function requireServerSideMcpBeta(gateway: Pick<GatewayRequestHeaders, "beta">, firstIndex: number): void {
  if (optedIntoServerSideMcp(gateway)) return;
  const param = `tools[${firstIndex}]`;
  throw badRequest(
    `${param} names a server-side MCP tool: send the header 'x-gateway-beta: ${SERVER_SIDE_MCP_BETA}' to have the gateway run it.`,
    param,
    "beta_required",
  );
}

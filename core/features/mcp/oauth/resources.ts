import { DEPLOYMENT_KEY } from "../../../control/organisation/bootstrap.ts";
import type { Settings } from "../../../config/settings.ts";
import type { Records } from "../../../store/ports.ts";
import { type McpServer, mcpServerStore } from "../records.ts";

/**
 * The gateway as an OAuth authorization server and its MCP servers as protected resources. The public base is
 * GATEWAY_PUBLIC_URL, else the request's origin; it is the issuer, and each MCP server's resource URL is
 * `<base>/mcp/<server id or slug>` (the MCP endpoint's own URL, RFC 8707 / RFC 9728).
 */

export function publicBase(request: Request, settings: Pick<Settings, "GATEWAY_PUBLIC_URL">): string {
  const base = settings.GATEWAY_PUBLIC_URL ?? new URL(request.url).origin;
  return base.replace(/\/+$/, "");
}

export const resourceUrl = (base: string, server: string) => `${base}/mcp/${encodeURIComponent(server)}`;

/**
 * An MCP server by id (any organisation: ids are unique) or by slug (in the deployment's own organisation, the
 * one unauthenticated URLs speak for).
 */
export async function findMcpServer(records: Records, ref: string): Promise<McpServer | undefined> {
  const store = mcpServerStore(records);
  if (store.isId(ref)) {
    const item = await records.get(`MCPSRV#${ref}`, "MCPSRV");
    if (!item || typeof item.organisationId !== "string") return undefined;
    return store.get(item.organisationId, ref);
  }
  const deployment = await records.get(DEPLOYMENT_KEY.pk, DEPLOYMENT_KEY.sk);
  const organisationId = deployment?.organisationId;
  return typeof organisationId === "string" ? store.get(organisationId, ref) : undefined;
}

/** What a `resource` parameter names: the whole gateway (its base) or one MCP server. */
export type ResourceTarget = { kind: "gateway" } | { kind: "server"; server: McpServer };

/**
 * The target of a resource indicator, or undefined when it is not one of this gateway's resource URLs: the base
 * itself, or `<base>/mcp/<server>` naming an existing server; no query, no fragment.
 */
export async function resolveResource(
  records: Records,
  base: string,
  resource: string,
): Promise<ResourceTarget | undefined> {
  if (resource === base || resource === `${base}/`) return { kind: "gateway" };
  if (!resource.startsWith(`${base}/mcp/`) || /[?#]/.test(resource)) return undefined;
  const rest = resource.slice(`${base}/mcp/`.length).replace(/\/$/, "");
  if (rest === "" || rest.includes("/")) return undefined;
  let ref: string;
  try {
    ref = decodeURIComponent(rest);
  } catch {
    return undefined;
  }
  const server = await findMcpServer(records, ref);
  return server ? { kind: "server", server } : undefined;
}

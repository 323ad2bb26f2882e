import type { Client } from "@modelcontextprotocol/client";
import type { Principal } from "../../../auth/principal.ts";
import { upstreamTooLargeIn } from "../../../http/errors.ts";
import { UPSTREAM_TOO_LARGE } from "../../../util/read-bounded.ts";
import type { Services } from "../../../services.ts";
import type { McpTarget } from "../endpoint/access.ts";
import { McpToolError } from "../tool-host.ts";
import { upstreamAuthHeaders } from "./auth.ts";
import { connectUpstream, upstreamFailureOf } from "./client.ts";
import { UpstreamPool } from "./pool.ts";

/** Kept upstream clients of server-side tool calls (upstream-pool.ts). */
const pool = new UpstreamPool({ ttlMs: 20_000, maxEntries: 200 });

export async function withUpstream<T>(
  services: Services,
  principal: Principal,
  target: McpTarget,
  signal: AbortSignal | undefined,
  use: (client: Client) => Promise<T>,
): Promise<T> {
  const { server, integration } = target;
  const caller = principal.userId ? `user:${principal.userId}` : `key:${principal.keyId ?? principal.kind}`;
  const key = `${server.id}@${server.version}|${integration.id}@${integration.version}|${caller}`;
  try {
    return await pool.use(
      key,
      async () => {
        const headers = await upstreamAuthHeaders(services, integration, { server, userId: principal.userId, signal });
        // Not the caller's signal: a kept client outlives this call.
        return connectUpstream(services, integration, headers);
      },
      // A client closed by an answer too large reports that, not the "connection closed" of its pending calls.
      (client) =>
        use(client).catch((error: unknown) => {
          throw upstreamFailureOf(client, error);
        }),
    );
  } catch (error) {
    throw error instanceof McpToolError ? error : upstreamError(error);
  }
}

export function upstreamError(error: unknown): McpToolError {
  if (error instanceof McpToolError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  // The SDK's timeout (v2 names it; v1 and 2025-era peers used -32001).
  if (code === "REQUEST_TIMEOUT" || code === -32001)
    return new McpToolError(504, `The MCP server timed out: ${message}`, "mcp_upstream_timeout");
  const tooLarge = upstreamTooLargeIn(error);
  if (tooLarge) return new McpToolError(502, tooLarge.message, UPSTREAM_TOO_LARGE);
  // A refusal of the upstream's own auth (upstream/auth.ts throws the HTTP layer's errors, with a status).
  if (typeof (error as { status?: unknown }).status === "number")
    return new McpToolError(502, message, typeof code === "string" ? code : "mcp_upstream_refused");
  return new McpToolError(502, `The MCP server failed: ${message.slice(0, 300)}`, "mcp_upstream_error");
}

/** A failed host call as the McpToolError it answers, noted on its log record. */
export function noteHostFailure(
  record: { status: number; error?: { message: string; code: string | null } },
  error: unknown,
) {
  const failure = error instanceof McpToolError ? error : upstreamError(error);
  record.status = failure.status;
  record.error = { message: failure.message, code: failure.code };
  return failure;
}

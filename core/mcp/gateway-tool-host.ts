import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Principal } from "../auth/principal.ts";
import { HttpError, UPSTREAM_TOO_LARGE, upstreamTooLargeIn } from "../http/errors.ts";
import type { Services } from "../services.ts";
import { type McpTarget, resolveMcpTarget } from "./access.ts";
import { admitMcpToolCall } from "./limits.ts";
import { type McpRequestRecord, writeMcpLog } from "./request-log.ts";
import { McpToolError, type McpToolDescriptor, type McpToolHost, type McpToolResult } from "./tool-host.ts";
import { upstreamAuthHeaders } from "./upstream-auth.ts";
import { connectUpstream, upstreamFailureOf } from "./upstream-client.ts";
import { UpstreamPool } from "./upstream-pool.ts";

/** At most this many tools are offered from one server (a model's tool list has limits of its own). */
const MAX_TOOLS = 500;

/**
 * The MCP gateway as the rest of the gateway uses it (core/mcp/tool-host.ts; server-side MCP tools): the same
 * server resolution, access checks, allow-list, rate limits and logs as the `/mcp/:server` endpoint, without
 * HTTP. Failures are McpToolErrors: 404 unknown server or hidden tool, 403 access, 429 rate limit, 502/504
 * upstream.
 */
export function createMcpToolHost(services: Services): McpToolHost {
  return {
    async listTools(principal, serverRef) {
      const target = await resolveMcpTarget(services, principal, serverRef);
      return withUpstream(services, principal, target, undefined, async (client) => {
        const tools: McpToolDescriptor[] = [];
        let cursor: string | undefined;
        do {
          const page = await client.listTools(cursor ? { cursor } : {}, {
            timeout: services.settings.MCP_UPSTREAM_TIMEOUT_MS,
          });
          for (const tool of page.tools) {
            if (!target.allowed.tools.has(tool.name) || tools.length >= MAX_TOOLS) continue;
            tools.push({
              name: tool.name,
              ...(tool.title ? { title: tool.title } : {}),
              ...(tool.description ? { description: tool.description } : {}),
              inputSchema: tool.inputSchema as Record<string, unknown>,
              ...(tool.annotations ? { annotations: tool.annotations as Record<string, unknown> } : {}),
            });
          }
          cursor = page.nextCursor;
        } while (cursor && tools.length < MAX_TOOLS);
        return tools;
      });
    },

    async callTool(principal, serverRef, call, context) {
      const startedAt = performance.now();
      const target = await resolveMcpTarget(services, principal, serverRef);
      const record: McpRequestRecord = {
        method: "tools/call",
        name: call.name,
        arguments: call.arguments,
        status: 200,
      };
      const pending: Array<Promise<unknown>> = [];
      const waitUntil = (work: Promise<unknown>) => void pending.push(work);
      try {
        if (!target.allowed.tools.has(call.name)) {
          throw new McpToolError(
            404,
            `Tool '${call.name}' is not available on MCP server '${target.server.slug}'.`,
            "mcp_tool_not_found",
          );
        }
        try {
          await admitMcpToolCall(services, principal, target, { waitUntil });
        } catch (error) {
          if (error instanceof HttpError && error.status === 429)
            throw new McpToolError(429, error.message, "rate_limit_exceeded");
          throw error;
        }
        const result = await withUpstream(services, principal, target, context.signal, async (client) => {
          const { CallToolResultSchema } = await import("@modelcontextprotocol/sdk/types.js");
          return client.request(
            { method: "tools/call", params: { name: call.name, arguments: call.arguments } },
            CallToolResultSchema,
            {
              signal: context.signal,
              timeout: services.settings.MCP_UPSTREAM_TIMEOUT_MS,
            },
          );
        });
        record.resultBytes = JSON.stringify(result).length;
        record.toolError = result.isError === true;
        return result as McpToolResult;
      } catch (error) {
        const failure = error instanceof McpToolError ? error : upstreamError(error);
        record.status = failure.status;
        record.error = { message: failure.message, code: failure.code };
        throw failure;
      } finally {
        pending.push(
          writeMcpLog(services, principal, target.server, record, {
            traceId: context.traceId,
            startedAt,
            httpMethod: "POST",
            path: `/mcp/${target.server.slug}`,
            route: "/mcp/:server",
          }),
        );
        await Promise.allSettled(pending);
      }
    },
  };
}

/** Kept upstream clients of server-side tool calls (upstream-pool.ts). */
const pool = new UpstreamPool({ ttlMs: 20_000, maxEntries: 200 });

async function withUpstream<T>(
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
      (client) =>
        use(client).catch((error: unknown) => {
          throw upstreamFailureOf(client, error);
        }),
    );
  } catch (error) {
    throw error instanceof McpToolError ? error : upstreamError(error);
  }
}

function upstreamError(error: unknown): McpToolError {
  if (error instanceof McpToolError) return error;
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  if (code === -32001) return new McpToolError(504, `The MCP server timed out: ${message}`, "mcp_upstream_timeout");
  const tooLarge = upstreamTooLargeIn(error);
  if (tooLarge) return new McpToolError(502, tooLarge.message, UPSTREAM_TOO_LARGE);
  if (error instanceof HttpError) return new McpToolError(502, error.message, error.code ?? "mcp_upstream_refused");
  return new McpToolError(502, `The MCP server failed: ${message.slice(0, 300)}`, "mcp_upstream_error");
}

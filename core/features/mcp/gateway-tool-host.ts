import { HttpError } from "../../http/errors.ts";
import type { Services } from "../../services.ts";
import { resolveMcpTarget } from "./endpoint/access.ts";
import { admitMcpToolCall } from "./endpoint/limits.ts";
import { type McpRequestRecord, writeMcpLog } from "./endpoint/request-log.ts";
import { McpToolError, type McpToolDescriptor, type McpToolHost, type McpToolResult } from "./tool-host.ts";
import { mcpContextHost } from "./gateway-context-host.ts";
import { noteHostFailure, withUpstream } from "./upstream/kept-clients.ts";

/** At most this many tools are offered from one server (a model's tool list has limits of its own). */
const MAX_TOOLS = 500;

/**
 * The MCP gateway as the rest of the gateway uses it (core/features/mcp/tool-host.ts; server-side MCP tools): the same
 * server resolution, access checks, allow-list, rate limits and logs as the `/mcp/:server` endpoint, without
 * HTTP. Failures are McpToolErrors: 404 unknown server or hidden tool, 403 access, 429 rate limit, 502/504
 * upstream.
 */
export function createMcpToolHost(services: Services): McpToolHost {
  return {
    ...mcpContextHost(services),
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
        const result = await withUpstream(services, principal, target, context.signal, (client) =>
          client.request(
            { method: "tools/call", params: { name: call.name, arguments: call.arguments } },
            { signal: context.signal, timeout: services.settings.MCP_UPSTREAM_TIMEOUT_MS },
          ),
        );
        record.resultBytes = JSON.stringify(result).length;
        record.toolError = result.isError === true;
        return result as McpToolResult;
      } catch (error) {
        throw noteHostFailure(record, error);
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

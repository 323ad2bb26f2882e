import type { Principal } from "../../../auth/principal.ts";
import { type McpContextRequest, McpToolError, type McpToolHost } from "../tool-host.ts";
import { contextRequestOf } from "./context-tools.ts";
import { toolErrorText, toolMessageText } from "./tool-results.ts";
import type { McpToolNames, McpToolTarget } from "./tool-names.ts";

/** A tool call as chat answers carry it. */
export interface ChatToolCall {
  id: string;
  type?: "function";
  function: { name: string; arguments: string };
}

/** A chat `tool` message answering one call. */
export interface ToolMessage {
  role: "tool";
  tool_call_id: string;
  content: string;
}

/** What one server-side call did, for the answer's `gateway_mcp` summary. */
export interface ToolCallRecord {
  server: string;
  tool: string;
  is_error: boolean;
  ms: number;
}

/** The calls of an answer the gateway runs (server-side MCP tools) and the ones left to the client. */
export function splitToolCalls(
  calls: ChatToolCall[] | undefined,
  names: McpToolNames,
): { server: Array<ChatToolCall & { target: McpToolTarget }>; client: ChatToolCall[] } {
  const server: Array<ChatToolCall & { target: McpToolTarget }> = [];
  const client: ChatToolCall[] = [];
  for (const call of calls ?? []) {
    const target = names.targetOf(call.function?.name);
    if (target) server.push({ ...call, target });
    else client.push(call);
  }
  return { server, client };
}

/**
 * Runs server-side tool calls through the MCP gateway, all at once, in the request's trace: each answers with a
 * `tool` message. What the model should hear about (bad arguments, a tool error, a refused or rate-limited
 * call, an unreachable server) becomes an error result; anything else (a fault of the gateway) throws.
 */
export async function runToolCalls(
  calls: Array<ChatToolCall & { target: McpToolTarget }>,
  host: McpToolHost,
  principal: Principal,
  context: { traceId: string; signal?: AbortSignal },
): Promise<{ messages: ToolMessage[]; records: ToolCallRecord[] }> {
  const outcomes = await Promise.all(
    calls.map(async (call) => {
      const started = performance.now();
      const { server, tool } = call.target;
      let content: string;
      let isError = true;
      const args = argumentsOf(call.function.arguments);
      const asked =
        typeof args === "string" || call.target.kind === "tool" ? args : contextRequestOf(call.target, args);
      if (typeof asked === "string") content = toolErrorText(asked);
      else {
        try {
          const result =
            call.target.kind === "tool"
              ? await host.callTool(
                  principal,
                  server,
                  { name: tool, arguments: asked as Record<string, unknown> },
                  context,
                )
              : await useContext(host, principal, server, asked as McpContextRequest, context);
          content = toolMessageText(result);
          isError = result.isError === true;
        } catch (error) {
          if (!(error instanceof McpToolError)) throw error;
          content = toolErrorText(error.message);
        }
      }
      const message: ToolMessage = { role: "tool", tool_call_id: call.id, content };
      const record: ToolCallRecord = { server, tool, is_error: isError, ms: Math.round(performance.now() - started) };
      return { message, record };
    }),
  );
  return { messages: outcomes.map((o) => o.message), records: outcomes.map((o) => o.record) };
}

/** A context tool's call (reading a resource, rendering a prompt), on a host that serves them. */
function useContext(
  host: McpToolHost,
  principal: Principal,
  server: string,
  request: McpContextRequest,
  context: { traceId: string; signal?: AbortSignal },
) {
  if (!host.useContext)
    throw new McpToolError(404, "This gateway does not serve MCP prompts and resources.", "mcp_context_unavailable");
  return host.useContext(principal, server, request, context);
}

/** The call's arguments as an object, or why they are not one (told to the model). */
function argumentsOf(text: string | undefined): Record<string, unknown> | string {
  if (text === undefined || text.trim() === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
    return "The arguments must be a JSON object.";
  } catch {
    return "The arguments are not valid JSON.";
  }
}

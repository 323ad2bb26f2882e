import type { Principal } from "../../core/auth/principal.ts";
import {
  type McpToolCallContext,
  type McpToolDescriptor,
  McpToolError,
  type McpToolHost,
  type McpToolResult,
} from "../../core/features/mcp/tool-host.ts";

/**
 * An McpToolHost for tests: servers by slug with their tools and a function per tool; `denied` servers answer
 * 403, unknown ones 404. Every call is recorded (server, tool, arguments, trace id).
 */
export class FakeMcpTools implements McpToolHost {
  readonly calls: Array<{ server: string; tool: string; arguments: Record<string, unknown>; traceId: string }> = [];
  readonly servers: Record<
    string,
    Array<McpToolDescriptor & { run(args: Record<string, any>): McpToolResult | Promise<McpToolResult> }>
  >;
  readonly denied: Set<string>;

  constructor(servers: FakeMcpTools["servers"], denied: string[] = []) {
    this.servers = servers;
    this.denied = new Set(denied);
  }

  #server(serverRef: string) {
    if (this.denied.has(serverRef))
      throw new McpToolError(403, `You may not use the MCP server '${serverRef}'.`, "mcp_server_denied");
    const tools = this.servers[serverRef];
    if (!tools) throw new McpToolError(404, `No MCP server '${serverRef}'.`, "mcp_server_not_found");
    return tools;
  }

  async listTools(_principal: Principal, serverRef: string): Promise<McpToolDescriptor[]> {
    return this.#server(serverRef).map(({ run: _run, ...descriptor }) => descriptor);
  }

  async callTool(
    _principal: Principal,
    serverRef: string,
    call: { name: string; arguments: Record<string, unknown> },
    context: McpToolCallContext,
  ): Promise<McpToolResult> {
    const tool = this.#server(serverRef).find((candidate) => candidate.name === call.name);
    if (!tool) throw new McpToolError(404, `No tool '${call.name}'.`, "mcp_tool_not_found");
    this.calls.push({ server: serverRef, tool: call.name, arguments: call.arguments, traceId: context.traceId });
    return tool.run(call.arguments);
  }
}

/** A calculator server: `add` (numbers a and b) and `fail` (always an error result). */
export function calculatorServer(): FakeMcpTools["servers"][string] {
  return [
    {
      name: "add",
      description: "Adds two numbers",
      inputSchema: {
        type: "object",
        properties: { a: { type: "number" }, b: { type: "number" } },
        required: ["a", "b"],
      },
      run: (args) => ({ content: [{ type: "text", text: String(Number(args.a) + Number(args.b)) }] }),
    },
    {
      name: "fail",
      inputSchema: { type: "object", properties: {} },
      run: () => ({ content: [{ type: "text", text: "division by zero" }], isError: true }),
    },
  ];
}

import type { Principal } from "../../auth/principal.ts";

/**
 * What the rest of the gateway (server-side MCP tools in chat and responses, issue 27) asks of the MCP gateway:
 * the tools a caller may use on a server, and calling one of them. Implemented by the MCP gateway (core/features/mcp), with
 * the same access checks, capability allow-list, rate limits and logs as a call through the MCP endpoint.
 * Shapes are MCP's own (`tools/list` items and `tools/call` results).
 */

export interface McpToolDescriptor {
  name: string;
  title?: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: Record<string, unknown>;
}

export interface McpToolResult {
  content: Array<Record<string, unknown>>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface McpToolCallContext {
  /** The trace the call belongs to (the chat request's), so its log joins that trace. */
  traceId: string;
  signal?: AbortSignal;
}

/** Thrown when a server is unknown to the caller, denied to them, or a tool is hidden or rate limited. */
export class McpToolError extends Error {
  readonly status: 400 | 403 | 404 | 429 | 502 | 504;
  readonly code: string;
  constructor(status: McpToolError["status"], message: string, code: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

/** The prompts and resources a caller may use on a server (server-side mode's context tools). */
export interface McpContextListing {
  resources: Array<{ uri: string; name?: string; description?: string }>;
  templates: Array<{ uriTemplate: string; name?: string; description?: string }>;
  prompts: Array<{
    name: string;
    description?: string;
    arguments?: Array<{ name: string; description?: string; required?: boolean }>;
  }>;
}

/** Reading a resource or rendering a prompt, asked of a server-side context tool. */
export type McpContextRequest =
  | { kind: "resource"; uri: string }
  | { kind: "prompt"; name: string; arguments: Record<string, string> };

export interface McpToolHost {
  /** The tools `principal` may call on a server (id or slug in the principal's workspace): enabled ones only. */
  listTools(principal: Principal, serverRef: string): Promise<McpToolDescriptor[]>;
  /** Calls one tool; a hidden tool or a denied user is refused before anything reaches the upstream. */
  callTool(
    principal: Principal,
    serverRef: string,
    call: { name: string; arguments: Record<string, unknown> },
    context: McpToolCallContext,
  ): Promise<McpToolResult>;
  /** The enabled prompts, resources and resource templates `principal` may use (same checks as listTools). */
  listContext?(principal: Principal, serverRef: string): Promise<McpContextListing>;
  /** Reads an enabled resource or renders an enabled prompt, as a tool result (a hidden one: 404). */
  useContext?(
    principal: Principal,
    serverRef: string,
    request: McpContextRequest,
    context: McpToolCallContext,
  ): Promise<McpToolResult>;
}

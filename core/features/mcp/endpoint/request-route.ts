/**
 * What an MCP request is, read once for routing, the allow-list, rate limits and the log. A 2026-07-28 request
 * carries it in its headers (`Mcp-Method`, `Mcp-Name`, Base64-sentinel encoded when not plain ASCII), so the
 * gateway routes on those and never walks the body for them; the SDK then checks that the headers match the
 * body (HeaderMismatch, -32020, 400) before any handler runs, and the handlers apply the allow-list again to
 * what the body names. A 2025-era request has no such headers: its method and name come from the message.
 */

export const MODERN_REVISION = "2026-07-28";

export interface McpRoute {
  era: "modern" | "legacy";
  /** The JSON-RPC method(s), comma-separated for a batch; `-` when unknown. */
  method: string;
  /** The tool, prompt or resource named (tools/call, prompts/get, resources/read; a task id for tasks/*). */
  name?: string;
}

type Message = Record<string, unknown> | null;

export function routeOf(headers: Headers, messages: Message[]): McpRoute {
  const version = headers.get("mcp-protocol-version") ?? "";
  const modern = version >= MODERN_REVISION && messages.length === 1;
  if (modern) {
    const method = headers.get("mcp-method") ?? methodOf(messages[0] ?? null);
    const name = decodeHeaderValue(headers.get("mcp-name"));
    return { era: "modern", method, ...(name !== undefined ? { name } : {}) };
  }
  const method = messages.map(methodOf).join(",") || "-";
  const params = (messages.length === 1 ? messages[0]?.params : undefined) as Record<string, unknown> | undefined;
  const named = params?.name ?? params?.uri ?? params?.taskId;
  return { era: "legacy", method, ...(typeof named === "string" ? { name: named } : {}) };
}

function methodOf(message: Message): string {
  if (!message || typeof message !== "object") return "-";
  if (typeof message.method === "string") return message.method;
  return "result" in message || "error" in message ? "(response)" : "-";
}

/** A header value, decoded when it uses the `=?base64?...?=` sentinel (MCP Streamable HTTP, value encoding). */
export function decodeHeaderValue(value: string | null): string | undefined {
  if (value === null) return undefined;
  const sentinel = /^=\?base64\?([A-Za-z0-9+/=]*)\?=$/.exec(value);
  return sentinel ? Buffer.from(sentinel[1]!, "base64").toString("utf8") : value;
}

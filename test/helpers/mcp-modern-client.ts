import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

/**
 * The MCP SDK v2 client pinned to the 2026-07-28 revision (no initialize, no session, per-request `_meta`,
 * `Mcp-Method` / `Mcp-Name` headers), pointed at one `/mcp/<server>` endpoint of a gateway: the in-process one, a
 * second instance, or the AWS shape's Router. `fetch` replaces the transport's own (to see which instance answered).
 */

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";
export const MODERN_REVISION = "2026-07-28";

export interface ModernEndpoint {
  /** The server's endpoint, `<gateway>/mcp/<slug>`. */
  url: string;
  /** The caller's credentials (x-gateway-api-key, a bearer token...) and any other header for every request. */
  headers: Record<string, string>;
  fetch?: typeof fetch;
}

/** The per-request envelope a 2026-07-28 client puts in `_meta`. */
export function modernEnvelope(options: { tasks?: boolean; clientName?: string } = {}): Record<string, unknown> {
  return {
    "io.modelcontextprotocol/protocolVersion": MODERN_REVISION,
    "io.modelcontextprotocol/clientInfo": { name: options.clientName ?? "raw", version: "1.0.0" },
    "io.modelcontextprotocol/clientCapabilities": options.tasks ? { extensions: { [TASKS_EXTENSION]: {} } } : {},
  };
}

function transportFor(endpoint: ModernEndpoint): StreamableHTTPClientTransport {
  return new StreamableHTTPClientTransport(new URL(endpoint.url), {
    requestInit: { headers: endpoint.headers },
    ...(endpoint.fetch ? { fetch: endpoint.fetch } : {}),
  });
}

/** A connected SDK Client on 2026-07-28 (its connect sends no initialize). */
export async function connectModernClient(endpoint: ModernEndpoint): Promise<Client> {
  const client = new Client({ name: "modern-test", version: "1.0.0" }, {
    versionNegotiation: { mode: { pin: MODERN_REVISION } },
  } as never);
  await client.connect(transportFor(endpoint));
  return client;
}

/**
 * One request sent with the SDK's own 2026-07-28 transport (it sets MCP-Protocol-Version, Mcp-Method and Mcp-Name),
 * declaring the Tasks extension unless `tasks` is false. The SDK's Client does not implement that extension (it
 * refuses a `resultType: "task"` answer), so the extension's messages go through its transport as they are.
 * Answers the JSON-RPC result; a JSON-RPC error is thrown with its `code`.
 */
export async function modernRequest(
  endpoint: ModernEndpoint,
  method: string,
  params: Record<string, unknown>,
  options: { tasks?: boolean } = {},
): Promise<Record<string, any>> {
  const transport = transportFor(endpoint);
  (transport as { setProtocolVersion?: (version: string) => void }).setProtocolVersion?.(MODERN_REVISION);
  const id = Math.floor(Math.random() * 1e9);
  const answer = new Promise<any>((resolve, reject) => {
    transport.onmessage = (message: any) => {
      if (message.id === id) resolve(message);
    };
    transport.onerror = reject;
  });
  await transport.start();
  const _meta = modernEnvelope({ tasks: options.tasks ?? true });
  await transport.send({ jsonrpc: "2.0", id, method, params: { ...params, _meta } } as never);
  const message = await answer;
  await transport.close();
  if (message.error) throw Object.assign(new Error(message.error.message), { code: message.error.code });
  return message.result as Record<string, any>;
}

/** A raw 2026-07-28 POST with the given headers over the endpoint's (to show what the gateway does with them). */
export async function modernPost(
  endpoint: ModernEndpoint,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await (endpoint.fetch ?? fetch)(endpoint.url, {
    method: "POST",
    headers: {
      ...endpoint.headers,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": MODERN_REVISION,
      ...headers,
    },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  const data = text.startsWith("{") ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? "{}");
  return { status: response.status, body: JSON.parse(data), headers: response.headers };
}

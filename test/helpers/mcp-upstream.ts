import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { z } from "zod";

/**
 * A real MCP server (built with the MCP SDK, streamable HTTP, stateless) for tests of the MCP gateway: tools
 * `echo`, `add` and `secret_admin_tool`, a prompt `greet`, a resource `memo://readme` and a template
 * `memo://notes/{id}`. With `requiredHeaders`, requests lacking one of them get 401. Records the headers of
 * every request and how many tool calls it served.
 */
export interface McpUpstream {
  url: string;
  /** Sessions a stateful upstream holds open now (always 0 for a stateless one). */
  openSessions(): number;
  requestHeaders: IncomingMessage["headers"][];
  toolCalls: Array<{ name: string; arguments: unknown }>;
  close(): Promise<void>;
}

export async function startMcpUpstream(
  options: { requiredHeaders?: Record<string, string>; stateful?: boolean } = {},
): Promise<McpUpstream> {
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const requestHeaders: IncomingMessage["headers"][] = [];
  const toolCalls: McpUpstream["toolCalls"] = [];
  const build = () => {
    const server = new McpServer({ name: "test-upstream", version: "1.2.3" }, { instructions: "A test server." });
    server.registerTool(
      "echo",
      { description: "Echoes the text back.", inputSchema: { text: z.string() } },
      async ({ text }) => {
        toolCalls.push({ name: "echo", arguments: { text } });
        return { content: [{ type: "text", text: `echo: ${text}` }] };
      },
    );
    server.registerTool(
      "add",
      { description: "Adds two numbers.", inputSchema: { a: z.number(), b: z.number() } },
      async ({ a, b }) => {
        toolCalls.push({ name: "add", arguments: { a, b } });
        return { content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } };
      },
    );
    server.registerTool("secret_admin_tool", { description: "Must stay hidden." }, async () => {
      toolCalls.push({ name: "secret_admin_tool", arguments: {} });
      return { content: [{ type: "text", text: "you should not see this" }] };
    });
    server.registerPrompt(
      "greet",
      { description: "Greets someone.", argsSchema: { name: z.string() } },
      ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello ${name}` } }] }),
    );
    server.registerResource("readme", "memo://readme", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: "The readme." }],
    }));
    server.registerResource(
      "note",
      new ResourceTemplate("memo://notes/{id}", { list: undefined }),
      { mimeType: "text/plain" },
      async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `Note ${id}` }] }),
    );
    return server;
  };
  const http = createServer(async (req, res) => {
    requestHeaders.push(req.headers);
    for (const [name, value] of Object.entries(options.requiredHeaders ?? {})) {
      if (req.headers[name.toLowerCase()] !== value) {
        res.writeHead(401, { "content-type": "application/json" }).end('{"error":"unauthorized"}');
        return;
      }
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : undefined;
    if (options.stateful) {
      const id = req.headers["mcp-session-id"];
      let transport = typeof id === "string" ? sessions.get(id) : undefined;
      if (!transport) {
        if (id) {
          res.writeHead(404, { "content-type": "application/json" }).end('{"error":"unknown session"}');
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          enableJsonResponse: true,
          onsessioninitialized: (sessionId) => void sessions.set(sessionId, created),
          onsessionclosed: (sessionId) => void sessions.delete(sessionId),
        });
        await build().connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res, body);
      return;
    }
    const server = build();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    openSessions: () => sessions.size,
    requestHeaders,
    toolCalls,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

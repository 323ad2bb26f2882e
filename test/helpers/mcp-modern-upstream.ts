import { McpServer, ResourceTemplate, createMcpHandler } from "@modelcontextprotocol/server";
import * as z from "zod";
import { serveFetchOnNode } from "./fetch-on-node.ts";

/**
 * A real MCP server of the 2026-07-28 revision, built with the MCP SDK v2 (`createMcpHandler`, which also serves
 * 2025-era clients statelessly), on node:http: tools `echo`, `add`, `secret_admin_tool` and `slow` (waits `ms`
 * or until its request is cancelled), a prompt `greet`, a resource `memo://readme` and a template
 * `memo://notes/{id}`. Its listings carry a cache hint (`ttlMs: 60000`). Records each JSON-RPC method it
 * served and how each `slow` call ended, so tests can see what reached it.
 */
export interface ModernUpstream {
  url: string;
  methods: string[];
  toolCalls: Array<{ name: string; arguments: unknown }>;
  slowCalls: Array<"finished" | "aborted">;
  close(): Promise<void>;
}

export const LIST_TTL_MS = 60_000;

export async function startModernUpstream(): Promise<ModernUpstream> {
  const methods: string[] = [];
  const toolCalls: ModernUpstream["toolCalls"] = [];
  const slowCalls: ModernUpstream["slowCalls"] = [];
  const build = () => {
    const server = new McpServer({ name: "modern-upstream", version: "2.0.0" }, {
      instructions: "A 2026-07-28 test server.",
      cacheHints: {
        "tools/list": { ttlMs: LIST_TTL_MS, cacheScope: "public" },
        "prompts/list": { ttlMs: LIST_TTL_MS, cacheScope: "public" },
        "resources/list": { ttlMs: LIST_TTL_MS, cacheScope: "public" },
      },
    } as never);
    server.registerTool(
      "echo",
      { description: "Echoes the text back.", inputSchema: z.object({ text: z.string() }) },
      async ({ text }) => {
        toolCalls.push({ name: "echo", arguments: { text } });
        return { content: [{ type: "text", text: `echo: ${text}` }] };
      },
    );
    server.registerTool(
      "add",
      { description: "Adds two numbers.", inputSchema: z.object({ a: z.number(), b: z.number() }) },
      async ({ a, b }) => {
        toolCalls.push({ name: "add", arguments: { a, b } });
        return { content: [{ type: "text", text: String(a + b) }], structuredContent: { sum: a + b } };
      },
    );
    server.registerTool("secret_admin_tool", { description: "Must stay hidden." }, async () => {
      toolCalls.push({ name: "secret_admin_tool", arguments: {} });
      return { content: [{ type: "text", text: "you should not see this" }] };
    });
    server.registerTool(
      "slow",
      { description: "Waits `ms` milliseconds.", inputSchema: z.object({ ms: z.number() }) },
      async ({ ms }, ctx) => {
        toolCalls.push({ name: "slow", arguments: { ms } });
        const signal = (ctx as { mcpReq: { signal: AbortSignal } }).mcpReq.signal;
        const finished = await new Promise<boolean>((resolve) => {
          const timer = setTimeout(() => resolve(true), ms);
          signal.addEventListener("abort", () => {
            clearTimeout(timer);
            resolve(false);
          });
        });
        slowCalls.push(finished ? "finished" : "aborted");
        return { content: [{ type: "text", text: `waited ${ms} ms` }] };
      },
    );
    server.registerPrompt(
      "greet",
      { description: "Greets someone.", argsSchema: z.object({ name: z.string() }) },
      ({ name }) => ({ messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}!` } }] }),
    );
    server.registerResource("readme", "memo://readme", { mimeType: "text/plain" }, async (uri) => ({
      contents: [{ uri: uri.href, text: "read me" }],
    }));
    server.registerResource(
      "notes",
      new ResourceTemplate("memo://notes/{id}", { list: undefined }),
      { mimeType: "text/plain" },
      async (uri, { id }) => ({ contents: [{ uri: uri.href, text: `note ${id}` }] }),
    );
    return server;
  };
  const handler = createMcpHandler(build);
  const served = await serveFetchOnNode(handler.fetch, (body) => {
    methods.push(...(Array.isArray(body) ? body : [body]).map((message) => String(message.method)));
  });
  return {
    url: served.url,
    methods,
    toolCalls,
    slowCalls,
    async close() {
      await served.close();
      await handler.close();
    },
  };
}

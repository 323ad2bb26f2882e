import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import {
  CallToolRequestSchema,
  type CallToolResult,
  CompleteRequestSchema,
  ElicitResultSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
  CreateMessageResultSchema,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";

/**
 * An MCP server (SDK low-level `Server`, streamable HTTP, stateless, SSE answers) offering what the MCP
 * conformance suite's server scenarios call (`npx @modelcontextprotocol/conformance list`): the `test_*` tools,
 * prompts and resources, logging, completion and subscriptions. The gateway is run against it to show it proxies
 * them faithfully (test/e2e/mcp-conformance.test.ts).
 */

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const EMPTY_OBJECT = { type: "object" as const, properties: {} };

const TOOLS: Tool[] = [
  { name: "test_simple_text", description: "Answers one text block.", inputSchema: EMPTY_OBJECT },
  { name: "test_image_content", description: "Answers one image.", inputSchema: EMPTY_OBJECT },
  { name: "test_audio_content", description: "Answers one audio clip.", inputSchema: EMPTY_OBJECT },
  { name: "test_embedded_resource", description: "Answers an embedded resource.", inputSchema: EMPTY_OBJECT },
  { name: "test_multiple_content_types", description: "Answers text, image and resource.", inputSchema: EMPTY_OBJECT },
  { name: "test_tool_with_logging", description: "Sends log messages while it runs.", inputSchema: EMPTY_OBJECT },
  { name: "test_tool_with_progress", description: "Reports progress while it runs.", inputSchema: EMPTY_OBJECT },
  { name: "test_error_handling", description: "Always fails.", inputSchema: EMPTY_OBJECT },
  {
    name: "test_sampling",
    description: "Asks the client's model.",
    inputSchema: { type: "object", properties: { prompt: { type: "string" } }, required: ["prompt"] },
  },
  {
    name: "test_elicitation",
    description: "Asks the user.",
    inputSchema: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
  },
  {
    name: "json_schema_2020_12_tool",
    description: "A tool whose input schema uses JSON Schema 2020-12 keywords.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: { address: { type: "object", properties: { street: { type: "string" }, city: { type: "string" } } } },
      properties: { name: { type: "string" }, address: { $ref: "#/$defs/address" } },
      additionalProperties: false,
    },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function buildServer(): Server {
  const server = new Server(
    { name: "conformance-upstream", version: "1.0.0" },
    {
      capabilities: {
        tools: {},
        prompts: {},
        resources: { subscribe: true },
        logging: {},
        completions: {},
      },
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
    switch (request.params.name) {
      case "test_simple_text":
        return text("This is a simple text response for testing.");
      case "test_image_content":
        return { content: [{ type: "image", data: PNG, mimeType: "image/png" }] };
      case "test_audio_content":
        return { content: [{ type: "audio", data: WAV, mimeType: "audio/wav" }] };
      case "test_embedded_resource":
        return {
          content: [
            {
              type: "resource",
              resource: { uri: "test://embedded-resource", mimeType: "text/plain", text: "Embedded resource text." },
            },
          ],
        };
      case "test_multiple_content_types":
        return {
          content: [
            { type: "text", text: "Several kinds of content:" },
            { type: "image", data: PNG, mimeType: "image/png" },
            {
              type: "resource",
              resource: { uri: "test://mixed-content-resource", mimeType: "application/json", text: '{"ok":true}' },
            },
          ],
        };
      case "test_tool_with_logging":
        for (const step of ["Tool execution started", "Tool processing data", "Tool execution completed"]) {
          await extra.sendNotification({ method: "notifications/message", params: { level: "info", data: step } });
          await sleep(20);
        }
        return text("Logged three messages.");
      case "test_tool_with_progress": {
        const token = extra._meta?.progressToken ?? 0;
        for (const progress of [0, 50, 100]) {
          await extra.sendNotification({
            method: "notifications/progress",
            params: { progressToken: token, progress, total: 100, message: `At ${progress} of 100` },
          });
          await sleep(20);
        }
        return text(String(token));
      }
      case "test_error_handling":
        return { isError: true, content: [{ type: "text", text: "This tool intentionally returns an error." }] };
      case "test_sampling": {
        const answer = await extra.sendRequest(
          {
            method: "sampling/createMessage",
            params: {
              messages: [{ role: "user", content: { type: "text", text: String(request.params.arguments?.prompt) } }],
              maxTokens: 100,
            },
          },
          CreateMessageResultSchema,
          // Stateless: the answer cannot come back to this call; do not hold the suite for the default minute.
          { timeout: 2000 },
        );
        return text(`LLM response: ${answer.content.type === "text" ? answer.content.text : ""}`);
      }
      case "test_elicitation": {
        const answer = await extra.sendRequest(
          {
            method: "elicitation/create",
            params: {
              message: String(request.params.arguments?.message),
              requestedSchema: { type: "object", properties: { response: { type: "string" } }, required: ["response"] },
            },
          },
          ElicitResultSchema,
          { timeout: 2000 },
        );
        return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case "json_schema_2020_12_tool":
        return text(`Called with ${JSON.stringify(request.params.arguments ?? {})}`);
      default:
        throw new McpError(-32602, `Unknown tool: ${request.params.name}`);
    }
  });

  const RESOURCES = [
    { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
    { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
    { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
  ];
  server.setRequestHandler(ListResourcesRequestSchema, async () => ({ resources: RESOURCES }));
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" }],
  }));
  server.setRequestHandler(ReadResourceRequestSchema, async (request) => {
    const { uri } = request.params;
    if (uri === "test://static-text" || uri === "test://watched-resource")
      return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
    if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id) {
      const text = JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` });
      return { contents: [{ uri, mimeType: "application/json", text }] };
    }
    throw new McpError(-32002, `Resource not found: ${uri}`);
  });
  server.setRequestHandler(SubscribeRequestSchema, async () => ({}));
  server.setRequestHandler(UnsubscribeRequestSchema, async () => ({}));

  const PROMPTS = [
    { name: "test_simple_prompt", description: "No arguments." },
    {
      name: "test_prompt_with_arguments",
      description: "Two arguments.",
      arguments: [
        { name: "arg1", required: true },
        { name: "arg2", required: true },
      ],
    },
    {
      name: "test_prompt_with_embedded_resource",
      description: "Embeds a resource.",
      arguments: [{ name: "resourceUri", required: true }],
    },
    { name: "test_prompt_with_image", description: "Includes an image." },
  ];
  server.setRequestHandler(ListPromptsRequestSchema, async () => ({ prompts: PROMPTS }));
  server.setRequestHandler(GetPromptRequestSchema, async (request) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "test_simple_prompt":
        return {
          messages: [{ role: "user", content: { type: "text", text: "This is a simple prompt for testing." } }],
        };
      case "test_prompt_with_arguments":
        return {
          messages: [
            {
              role: "user",
              content: { type: "text", text: `Prompt with arguments: arg1='${args.arg1}', arg2='${args.arg2}'` },
            },
          ],
        };
      case "test_prompt_with_embedded_resource":
        return {
          messages: [
            {
              role: "user",
              content: {
                type: "resource",
                resource: { uri: String(args.resourceUri), mimeType: "text/plain", text: "Embedded content." },
              },
            },
            { role: "user", content: { type: "text", text: "Please process the embedded resource above." } },
          ],
        };
      case "test_prompt_with_image":
        return {
          messages: [
            { role: "user", content: { type: "image", data: PNG, mimeType: "image/png" } },
            { role: "user", content: { type: "text", text: "Please analyze the image above." } },
          ],
        };
      default:
        throw new McpError(-32602, `Unknown prompt: ${request.params.name}`);
    }
  });
  server.setRequestHandler(SetLevelRequestSchema, async () => ({}));
  server.setRequestHandler(CompleteRequestSchema, async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  return server;
}

export async function startConformanceUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    if (req.method !== "POST") {
      res.writeHead(405, { allow: "POST" }).end();
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const server = buildServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString("utf8")));
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

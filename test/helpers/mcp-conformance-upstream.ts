import { ProtocolError, Server, type Tool, createMcpHandler } from "@modelcontextprotocol/server";
import { serveFetchOnNode } from "./fetch-on-node.ts";
import { MRTR_TOOLS, inputRequiredPrompt, multiRoundTool, stateCodec } from "./mcp-conformance-mrtr.ts";

/**
 * The reference upstream of the conformance runs: an MCP server built with the SDK v2's low-level `Server`, served
 * per request by `createMcpHandler` (the 2026-07-28 revision, and 2025-era clients statelessly), offering what
 * the conformance suite's server scenarios call for both requirement sets (`conformance list --server
 * --requirements <revision>`): the `test_*` tools, prompts and resources, logging, completion and
 * subscriptions, and the multi round-trip tools of 2026-07-28 (`input_required` with elicitation, sampling and
 * roots requests, an integrity-protected `requestState`, several rounds). The gateway is run against it to show
 * it proxies both eras faithfully (test/e2e/mcp-conformance.test.ts).
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
  ...MRTR_TOOLS.map((name) => ({ name, description: "Multi round-trip (SEP-2322).", inputSchema: EMPTY_OBJECT })),
  // The Tasks extension's fixtures: the gateway answers a call that outlasts MCP_TASK_AFTER_MS with a task.
  {
    name: "greet",
    description: "Greets at once.",
    inputSchema: { type: "object", properties: { name: { type: "string" } } },
  },
  {
    name: "slow_compute",
    description: "Sleeps `seconds`, then answers; cancelled when its request is.",
    inputSchema: { type: "object", properties: { seconds: { type: "number" } } },
  },
  { name: "failing_job", description: "Answers a tool error after a second.", inputSchema: EMPTY_OBJECT },
  { name: "protocol_error_job", description: "Fails with a protocol error after a second.", inputSchema: EMPTY_OBJECT },
  { name: "test_logging_tool", description: "Logs only when the request set a log level.", inputSchema: EMPTY_OBJECT },
  {
    name: "test_streaming_elicitation",
    description: "Answers with no request on its stream.",
    inputSchema: EMPTY_OBJECT,
  },
  {
    name: "json_schema_2020_12_tool",
    description: "A tool whose input schema uses JSON Schema 2020-12 keywords.",
    inputSchema: {
      $schema: "https://json-schema.org/draft/2020-12/schema",
      type: "object",
      $defs: {
        address: {
          $anchor: "addressDef",
          type: "object",
          properties: { street: { type: "string" }, city: { type: "string" } },
        },
      },
      properties: {
        name: { type: "string" },
        address: { $ref: "#/$defs/address" },
        contactMethod: { type: "string", enum: ["phone", "email"] },
        phone: { type: "string" },
        email: { type: "string" },
      },
      allOf: [{ anyOf: [{ required: ["phone"] }, { required: ["email"] }] }],
      if: { properties: { contactMethod: { const: "phone" } }, required: ["contactMethod"] },
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema 2020-12 keyword.
      then: { required: ["phone"] },
      else: { required: ["email"] },
      additionalProperties: false,
    },
  },
];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** True when `ms` passed, false when `signal` ended the wait first. */
const sleepUnlessCancelled = (ms: number, signal: AbortSignal) =>
  new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(true), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve(false);
    });
  });

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
      // A retry's requestState is checked before any handler runs (tampered state: -32602).
      requestState: { verify: stateCodec.verify },
    },
  );
  server.setRequestHandler("tools/list", async () => ({ tools: TOOLS }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });
    const extra = ctx;
    if (MRTR_TOOLS.includes(request.params.name)) return multiRoundTool(request.params.name, ctx);
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
          await extra.mcpReq.notify({ method: "notifications/message", params: { level: "info", data: step } });
          await sleep(20);
        }
        return text("Logged three messages.");
      case "test_tool_with_progress": {
        const token = extra.mcpReq._meta?.progressToken ?? 0;
        for (const progress of [0, 50, 100]) {
          await extra.mcpReq.notify({
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
        const answer = await extra.mcpReq.send(
          {
            method: "sampling/createMessage",
            params: {
              messages: [{ role: "user", content: { type: "text", text: String(request.params.arguments?.prompt) } }],
              maxTokens: 100,
            },
          },
          // Stateless: the answer cannot come back to this call; do not hold the suite for the default minute.
          { timeout: 2000 },
        );
        const content = answer.content as { type: string; text?: string };
        return text(`LLM response: ${content.type === "text" ? content.text : ""}`);
      }
      case "test_elicitation": {
        const answer = await extra.mcpReq.send(
          {
            method: "elicitation/create",
            params: {
              message: String(request.params.arguments?.message),
              requestedSchema: { type: "object", properties: { response: { type: "string" } }, required: ["response"] },
            },
          },
          { timeout: 2000 },
        );
        return text(`User response: action=${answer.action}, content=${JSON.stringify(answer.content ?? {})}`);
      }
      case "json_schema_2020_12_tool":
        return text(`Called with ${JSON.stringify(request.params.arguments ?? {})}`);
      case "test_logging_tool":
        // Delivered only when the request asked for logs (2026-07-28: `_meta` logLevel).
        await extra.mcpReq.log("info", "test_logging_tool ran");
        return text("Logged through the request's own channel.");
      case "test_streaming_elicitation":
        return text("A result, and no request on the stream.");
      case "greet":
        return text(`Hello, ${String(request.params.arguments?.name ?? "world")}!`);
      case "slow_compute": {
        const seconds = Number(request.params.arguments?.seconds ?? 0);
        if (!(await sleepUnlessCancelled(seconds * 1000, ctx.mcpReq.signal)))
          throw new ProtocolError(-32800, "Request cancelled");
        return text(`Computed after ${seconds} s.`);
      }
      case "failing_job":
        await sleep(1000);
        return { isError: true, content: [{ type: "text", text: "The job failed." }] };
      case "protocol_error_job":
        await sleep(1000);
        throw new ProtocolError(-32603, "The job broke.");
      default:
        throw new ProtocolError(-32602, `Unknown tool: ${request.params.name}`);
    }
  });

  const RESOURCES = [
    { uri: "test://static-text", name: "static-text", mimeType: "text/plain" },
    { uri: "test://static-binary", name: "static-binary", mimeType: "image/png" },
    { uri: "test://watched-resource", name: "watched-resource", mimeType: "text/plain" },
  ];
  server.setRequestHandler("resources/list", async () => ({ resources: RESOURCES }));
  server.setRequestHandler("resources/templates/list", async () => ({
    resourceTemplates: [{ uriTemplate: "test://template/{id}/data", name: "template", mimeType: "application/json" }],
  }));
  server.setRequestHandler("resources/read", async (request) => {
    const { uri } = request.params;
    if (uri === "test://static-text" || uri === "test://watched-resource")
      return { contents: [{ uri, mimeType: "text/plain", text: "This is the content of the static text resource." }] };
    if (uri === "test://static-binary") return { contents: [{ uri, mimeType: "image/png", blob: PNG }] };
    const id = /^test:\/\/template\/([^/]+)\/data$/.exec(uri)?.[1];
    if (id) {
      const text = JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` });
      return { contents: [{ uri, mimeType: "application/json", text }] };
    }
    // SEP-2164: an unknown resource is Invalid Params, naming the uri.
    throw new ProtocolError(-32602, `Resource not found: ${uri}`, { uri });
  });
  server.setRequestHandler("resources/subscribe", async () => ({}));
  server.setRequestHandler("resources/unsubscribe", async () => ({}));

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
    { name: "test_input_required_result_prompt", description: "Asks for context before it renders (SEP-2322)." },
  ];
  server.setRequestHandler("prompts/list", async () => ({ prompts: PROMPTS }));
  server.setRequestHandler("prompts/get", async (request, ctx) => {
    const args = request.params.arguments ?? {};
    switch (request.params.name) {
      case "test_input_required_result_prompt":
        return inputRequiredPrompt(ctx);
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
        throw new ProtocolError(-32602, `Unknown prompt: ${request.params.name}`);
    }
  });
  server.setRequestHandler("logging/setLevel", async () => ({}));
  server.setRequestHandler("completion/complete", async () => ({
    completion: { values: [], total: 0, hasMore: false },
  }));
  return server;
}

export async function startConformanceUpstream(): Promise<{ url: string; close(): Promise<void> }> {
  const handler = createMcpHandler(() => buildServer());
  const served = await serveFetchOnNode(handler.fetch);
  return {
    url: served.url,
    async close() {
      await served.close();
      await handler.close();
    },
  };
}

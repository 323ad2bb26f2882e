import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { McpServer } from "../../core/features/mcp/records.ts";
import { createKey, seedMember, seedUser, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type McpUpstream, startMcpUpstream } from "../helpers/mcp-upstream.ts";
import { seedMcpServer } from "../helpers/mcp-records.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";

/**
 * Server-side MCP tools (beta server-side-mcp-2026-06-01) through the openai SDK: the gateway expands
 * `@gateway-mcp/<server>` into the server's tools, runs the model's calls to them through the MCP tool host and
 * calls the model again, JSON and streamed, with usage summed and every step logged in the request's trace. The
 * tools are real: the MCP gateway (services.mcpTools) in front of an MCP server built with the SDK, which needs
 * its own credential header, with one tool hidden by the allow-list and one user denied.
 */

const BETA = { "x-gateway-beta": "server-side-mcp-2026-06-01" };
const STEP_LIMIT = 3;

const UPSTREAM_SECRET = "upstream-secret-9c2d";
let gateway: TestGateway;
let model: MockServer;
let upstream: McpUpstream;
let server: McpServer;
let memberKey: string;
let deniedKey: string;

/**
 * The mock model: calls the tool named `<server>__add` it was offered until it sees a tool result (always, under
 * /loop), then answers in text. Under /mixed it also calls the client's own tool `lookup`.
 */
function answer(request: RecordedRequest, res: Parameters<Parameters<typeof startMockServer>[0]>[1]) {
  const body = request.json();
  const add = body.tools.map((tool: any) => tool.function.name).find((name: string) => name.endsWith("__add"));
  const last = body.messages.at(-1);
  const looping = request.path.startsWith("/loop");
  const clientCall = { id: "call_client", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } };
  const calls = (server: unknown) => [server, ...(request.path.startsWith("/mixed") ? [clientCall] : [])];
  const step = body.messages.filter((message: any) => message.role === "tool").length;
  const usage = { prompt_tokens: 10 + step * 10, completion_tokens: 5, total_tokens: 15 + step * 10 };
  const callTool = looping || last.role !== "tool";
  const toolCall = {
    id: `call_${step}`,
    type: "function",
    function: { name: add, arguments: '{"a":2,"b":3}' },
  };
  if (!body.stream) {
    sendJson(res, 200, {
      id: `chatcmpl-mock-${step}`,
      object: "chat.completion",
      created: 1,
      model: "gpt-4o-mini",
      choices: [
        {
          index: 0,
          message: callTool
            ? { role: "assistant", content: null, tool_calls: calls(toolCall) }
            : { role: "assistant", content: `The sum is ${last.content}.` },
          finish_reason: callTool ? "tool_calls" : "stop",
        },
      ],
      usage,
    });
    return;
  }
  const chunk = (delta: unknown, finish: string | null = null) => ({
    data: {
      id: `chatcmpl-mock-${step}`,
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-4o-mini",
      choices: [{ index: 0, delta, finish_reason: finish }],
    },
  });
  const usageChunk = {
    data: {
      id: `chatcmpl-mock-${step}`,
      object: "chat.completion.chunk",
      created: 1,
      model: "gpt-4o-mini",
      choices: [],
      usage,
    },
  };
  const events = callTool
    ? [
        chunk({
          role: "assistant",
          content: null,
          tool_calls: [{ index: 0, id: toolCall.id, type: "function", function: { name: add, arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
        ...calls(undefined)
          .slice(1)
          .map(() => chunk({ tool_calls: [{ index: 1, ...clientCall }] })),
        chunk({}, "tool_calls"),
      ]
    : [chunk({ role: "assistant", content: "The sum is " }), chunk({ content: `${last.content}.` }), chunk({}, "stop")];
  return writeSse(res, [...events, ...(body.stream_options?.include_usage ? [usageChunk] : []), { data: "[DONE]" }]);
}

function client(path = "v1", headers: Record<string, string> = BETA, key = memberKey): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": key,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${model.url}/${path}`,
      ...headers,
    },
    maxRetries: 0,
  });
}

const traced = () => {
  const trace = randomUUID();
  return { trace, options: { headers: { "x-gateway-trace-id": trace } } };
};

/** The request logs of a trace, once `count` are written. */
async function logsOf(trace: string, count: number): Promise<any[]> {
  let logs: any[] = [];
  await expect
    .poll(
      async () => {
        const response = await fetch(`${gateway.url}/v1/logs?trace_id=${trace}`, {
          headers: { "x-gateway-api-key": gateway.adminKey },
        });
        logs = ((await response.json()) as { data: any[] }).data;
        // A tool call's log is written when the call ends: wait for all of them.
        return logs.length;
      },
      { timeout: 5000 },
    )
    .toBe(count);
  return logs;
}

const question = [{ role: "user" as const, content: "What is 2 + 3?" }];
const mcpTool = () => ({ type: "function" as const, function: { name: `@gateway-mcp/${server.slug}` } });
const modelLogs = (logs: any[]) => logs.filter((log) => log.route === "/v1/chat/completions");
const toolLogs = (logs: any[]) => logs.filter((log) => log.mcp?.method === "tools/call");

beforeAll(async () => {
  model = await startMockServer(answer);
  upstream = await startMcpUpstream({ requiredHeaders: { "x-upstream-key": UPSTREAM_SECRET } });
  gateway = await startTestGateway({ GATEWAY_MCP_MAX_TOOL_STEPS: String(STEP_LIMIT) });
  const workspace = await seedWorkspace(gateway, "Server-side MCP");
  const member = await seedUser(gateway, "ssm-member@example.com");
  const denied = await seedUser(gateway, "ssm-denied@example.com");
  await seedMember(gateway, workspace.id, member.id, "member");
  await seedMember(gateway, workspace.id, denied.id, "member");
  const key = (userId: string) =>
    createKey(gateway, gateway.adminKey, "workspace", "user", {
      name: "server-side mcp",
      workspace_id: workspace.id,
      user_id: userId,
      scopes: ["*"],
    }).then((created) => created.key as string);
  memberKey = await key(member.id);
  deniedKey = await key(denied.id);
  ({ server } = await seedMcpServer(gateway, {
    url: upstream.url,
    workspaceId: workspace.id,
    headers: { "X-Upstream-Key": UPSTREAM_SECRET },
    disabled: ["secret_admin_tool"],
    server: { user_access: [{ user_id: denied.id, enabled: false }] },
  }));
});

afterAll(async () => {
  await gateway?.close();
  await model?.close();
  await upstream?.close();
});

describe("server-side MCP tools in chat completions", () => {
  it("runs the model's tool call and answers with the model's second answer, usage summed, each step logged", async () => {
    const before = model.requests.length;
    const { trace, options } = traced();
    const completion = await client().chat.completions.create(
      { model: "gpt-4o-mini", messages: question, tools: [mcpTool()] },
      options,
    );
    expect(completion.choices[0]!.message.content).toBe("The sum is 5.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 });
    expect((completion as any).gateway_mcp).toMatchObject({
      steps: 2,
      tool_calls: [{ server: server.slug, tool: "add", is_error: false }],
    });

    const sent = model.requests.slice(before).map((request) => request.json());
    expect(sent).toHaveLength(2);
    // The model saw the server's allowed tools (not the hidden one), renamed, with their input schemas; never
    // the reference itself.
    const prefix = server.slug.replace(/[^a-zA-Z0-9_-]/g, "_");
    expect(sent[0].tools.map((tool: any) => tool.function.name).sort()).toEqual([`${prefix}__add`, `${prefix}__echo`]);
    expect(sent[0].tools.find((tool: any) => tool.function.name === `${prefix}__add`)).toMatchObject({
      type: "function",
      function: {
        description: "Adds two numbers.",
        parameters: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } } },
      },
    });
    // ...and then its own call and the tool's result (the text content; the upstream also gave structured content).
    expect(sent[1].messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_0", type: "function", function: { name: `${prefix}__add`, arguments: '{"a":2,"b":3}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_0", content: "5" },
    ]);
    expect(upstream.toolCalls.at(-1)).toEqual({ name: "add", arguments: { a: 2, b: 3 } });

    // One trace: both model calls and the tool call, written by the MCP gateway.
    const logs = await logsOf(trace, 3);
    expect(logs.every((log) => log.traceId === trace)).toBe(true);
    expect(toolLogs(logs)).toHaveLength(1);
    expect(toolLogs(logs)[0]).toMatchObject({ status: 200, mcp: { name: "add" } });
    // Each model call with its own usage and cost (the request's own record is the last call's).
    const byTokens = modelLogs(logs).sort((a, b) => a.usage.totalTokens - b.usage.totalTokens);
    expect(byTokens.map((log) => log.usage.totalTokens)).toEqual([15, 25]);
    expect(byTokens.every((log) => log.cost > 0)).toBe(true);
    expect(byTokens[0].spanName).toBe("server-side MCP step 1");
    expect(byTokens[1].spanName).toBeUndefined();
  });

  it("streams the final answer as valid chunks, with usage summed when asked, and [DONE]", async () => {
    const before = model.requests.length;
    const { trace, options } = traced();
    const stream = await client().chat.completions.create(
      {
        model: "gpt-4o-mini",
        messages: question,
        tools: [mcpTool()],
        stream: true,
        stream_options: { include_usage: true },
      },
      options,
    );
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === "chat.completion.chunk")).toBe(true);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("");
    expect(text).toBe("The sum is 5.");
    // The server-side call never reaches the client.
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
    const finish = chunks.filter((chunk) => chunk.choices[0]?.finish_reason);
    expect(finish.map((chunk) => chunk.choices[0].finish_reason)).toEqual(["stop"]);
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 },
    });

    const sent = model.requests.slice(before).map((request) => request.json());
    expect(sent).toHaveLength(2);
    expect(sent[1].messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_0", content: "5" });
    const logs = await logsOf(trace, 3);
    expect(modelLogs(logs).map((log) => log.stream)).toEqual([true, true]);
    expect(toolLogs(logs)).toHaveLength(1);
  });

  it("answers 400 naming the tool without the beta header, and calls no model", async () => {
    const before = model.requests.length;
    const error = await client("v1", {})
      .chat.completions.create({
        model: "gpt-4o-mini",
        messages: question,
        tools: [{ type: "function", function: { name: "lookup" } }, mcpTool()],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tools[1]");
    expect(model.requests.length).toBe(before);
  });

  it("answers 404 for an unknown server or a hidden tool, and 403 for a denied user, before any model call", async () => {
    const before = model.requests.length;
    for (const [name, status, key] of [
      ["@gateway-mcp/nope", 404, memberKey],
      [`@gateway-mcp/${server.slug}/secret_admin_tool`, 404, memberKey],
      [`@gateway-mcp/${server.slug}`, 403, deniedKey],
    ] as const) {
      const error = (await client("v1", BETA, key)
        .chat.completions.create({
          model: "gpt-4o-mini",
          messages: question,
          tools: [{ type: "function", function: { name } }],
        })
        .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
      expect(error.status).toBe(status);
    }
    expect(model.requests.length).toBe(before);
  });

  it("stops at the step limit with the last answer, finish_reason length, not an error", async () => {
    const before = model.requests.length;
    const { trace, options } = traced();
    const completion = await client("loop/v1").chat.completions.create(
      { model: "gpt-4o-mini", messages: question, tools: [mcpTool()] },
      options,
    );
    expect(model.requests.length - before).toBe(STEP_LIMIT);
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
    expect((completion as any).gateway_mcp).toMatchObject({ steps: STEP_LIMIT, stopped: "max_tool_steps" });
    expect((completion as any).gateway_mcp.tool_calls).toHaveLength(STEP_LIMIT - 1);
    const logs = await logsOf(trace, STEP_LIMIT + STEP_LIMIT - 1);
    expect(modelLogs(logs)).toHaveLength(STEP_LIMIT);

    const stream = await client("loop/v1").chat.completions.create({
      model: "gpt-4o-mini",
      messages: question,
      tools: [mcpTool()],
      stream: true,
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("length");
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
  });
});

describe("server-side and client tools in one answer", () => {
  const lookup = { type: "function" as const, function: { name: "lookup", parameters: { type: "object" } } };

  it("runs the server-side call and returns the client's call as usual (JSON and stream)", async () => {
    const before = upstream.toolCalls.length;
    const completion = await client("mixed/v1").chat.completions.create({
      model: "gpt-4o-mini",
      messages: question,
      tools: [lookup, mcpTool()],
    });
    expect(completion.choices[0]!.finish_reason).toBe("tool_calls");
    expect(completion.choices[0]!.message.tool_calls).toEqual([
      { id: "call_client", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
    ]);
    expect((completion as any).gateway_mcp).toMatchObject({ steps: 1, stopped: "client_tool_calls" });
    expect(upstream.toolCalls.slice(before)).toEqual([{ name: "add", arguments: { a: 2, b: 3 } }]);

    // The SDK's own stream assembler reads the chunks into a completion.
    const stream = client("mixed/v1").chat.completions.stream({
      model: "gpt-4o-mini",
      messages: question,
      tools: [lookup, mcpTool()],
    });
    const final = await stream.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe("tool_calls");
    expect(final.choices[0]!.message.tool_calls).toEqual([
      { id: "call_client", type: "function", function: { name: "lookup", arguments: '{"q":"x"}' } },
    ]);
  });
});

describe("server-side MCP tools in the Responses API", () => {
  const mcp = () => ({
    type: "mcp" as const,
    server_label: "calculator",
    server_url: `@gateway-mcp/${server.slug}`,
    allowed_tools: ["add"],
    require_approval: "never" as const,
  });

  it("runs the loop through chat calls and answers a stored Response with usage summed", async () => {
    const before = model.requests.length;
    const { trace, options } = traced();
    const response = await client().responses.create(
      { model: "gpt-4o-mini", input: "What is 2 + 3?", tools: [mcp()] },
      options,
    );
    expect(response.status).toBe("completed");
    expect(response.output_text).toBe("The sum is 5.");
    expect(response.usage).toMatchObject({ input_tokens: 30, output_tokens: 10, total_tokens: 40 });
    expect((response as any).gateway_mcp).toMatchObject({ steps: 2, tool_calls: [{ tool: "add", is_error: false }] });

    const sent = model.requests.slice(before);
    expect(sent.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
    // allowed_tools kept only `add` of the server's tools.
    expect(sent[0]!.json().tools.map((tool: any) => tool.function.name)).toEqual([
      `${server.slug.replace(/[^a-zA-Z0-9_-]/g, "_")}__add`,
    ]);
    expect(sent[1]!.json().messages.at(-1)).toEqual({ role: "tool", tool_call_id: "call_0", content: "5" });

    // Stored after the answer, as any Response.
    await expect
      .poll(
        async () =>
          (
            await client()
              .responses.retrieve(response.id)
              .catch(() => undefined)
          )?.output_text,
      )
      .toBe("The sum is 5.");
    const logs = await logsOf(trace, 3);
    expect(logs.map((log) => log.route).sort()).toEqual(["/mcp/:server", "/v1/chat/completions", "/v1/responses"]);
  });

  it("streams the final answer as Responses events", async () => {
    const stream = await client().responses.create({
      model: "gpt-4o-mini",
      input: "What is 2 + 3?",
      tools: [mcp()],
      stream: true,
    });
    const events: any[] = [];
    for await (const event of stream) events.push(event);
    const text = events.filter((event) => event.type === "response.output_text.delta").map((event) => event.delta);
    expect(text.join("")).toBe("The sum is 5.");
    const completed = events.at(-1);
    expect(completed.type).toBe("response.completed");
    expect(completed.response.output_text).toBe("The sum is 5.");
    expect(completed.response.usage).toMatchObject({ input_tokens: 30, output_tokens: 10 });
    expect(completed.response.gateway_mcp).toMatchObject({ steps: 2 });
    expect(events.some((event) => event.type === "response.function_call_arguments.delta")).toBe(false);
  });

  it("answers 400 without the beta header", async () => {
    const error = (await client("v1", {})
      .responses.create({ model: "gpt-4o-mini", input: "hi", tools: [mcp()] })
      .catch((caught: unknown) => caught)) as InstanceType<typeof OpenAI.APIError>;
    expect(error.status).toBe(400);
    expect((error as any).param).toBe("tools[0]");
  });
});

import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeMcpTools, calculatorServer } from "../helpers/fake-mcp-tools.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";

/**
 * Server-side MCP tools (beta server-side-mcp-2026-06-01) through the openai SDK: the gateway expands
 * `@gateway-mcp/<server>` into the server's tools, runs the model's calls to them through the MCP tool host and
 * calls the model again, JSON and streamed, with usage summed and every step logged in the request's trace.
 */

const BETA = { "x-gateway-beta": "server-side-mcp-2026-06-01" };
const STEP_LIMIT = 3;

let gateway: TestGateway;
let model: MockServer;
let tools: FakeMcpTools;

/** The mock model: calls calc__add until it sees a tool result (always, under /loop), then answers in text. */
function answer(request: RecordedRequest, res: Parameters<Parameters<typeof startMockServer>[0]>[1]) {
  const body = request.json();
  const last = body.messages.at(-1);
  const looping = request.path.startsWith("/loop");
  const step = body.messages.filter((message: any) => message.role === "tool").length;
  const usage = { prompt_tokens: 10 + step * 10, completion_tokens: 5, total_tokens: 15 + step * 10 };
  const callTool = looping || last.role !== "tool";
  const toolCall = {
    id: `call_${step}`,
    type: "function",
    function: { name: "calc__add", arguments: '{"a":2,"b":3}' },
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
            ? { role: "assistant", content: null, tool_calls: [toolCall] }
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
          tool_calls: [{ index: 0, id: toolCall.id, type: "function", function: { name: "calc__add", arguments: "" } }],
        }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '{"a":2,' } }] }),
        chunk({ tool_calls: [{ index: 0, function: { arguments: '"b":3}' } }] }),
        chunk({}, "tool_calls"),
      ]
    : [chunk({ role: "assistant", content: "The sum is " }), chunk({ content: `${last.content}.` }), chunk({}, "stop")];
  return writeSse(res, [...events, ...(body.stream_options?.include_usage ? [usageChunk] : []), { data: "[DONE]" }]);
}

function client(path = "v1", headers: Record<string, string> = BETA): OpenAI {
  return new OpenAI({
    apiKey: "sk-test",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
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
        return logs.length;
      },
      { timeout: 5000 },
    )
    .toBe(count);
  return logs;
}

const question = [{ role: "user" as const, content: "What is 2 + 3?" }];
const mcpTool = { type: "function" as const, function: { name: "@gateway-mcp/calc" } };

beforeAll(async () => {
  model = await startMockServer(answer);
  gateway = await startTestGateway({ GATEWAY_MCP_MAX_TOOL_STEPS: String(STEP_LIMIT) });
  tools = new FakeMcpTools({ calc: calculatorServer() }, ["secret"]);
  // A test-only McpToolHost in the gateway's services (the MCP gateway's own lands on branch mcp-gateway).
  gateway.gateway.services.mcpTools = tools;
});

afterAll(async () => {
  await gateway?.close();
  await model?.close();
});

describe("server-side MCP tools in chat completions", () => {
  it("runs the model's tool call and answers with the model's second answer, usage summed, each step logged", async () => {
    const before = model.requests.length;
    const { trace, options } = traced();
    const completion = await client().chat.completions.create(
      { model: "gpt-4o-mini", messages: question, tools: [mcpTool] },
      options,
    );
    expect(completion.choices[0]!.message.content).toBe("The sum is 5.");
    expect(completion.choices[0]!.finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 30, completion_tokens: 10, total_tokens: 40 });
    expect((completion as any).gateway_mcp).toMatchObject({
      steps: 2,
      tool_calls: [{ server: "calc", tool: "add", is_error: false }],
    });

    const sent = model.requests.slice(before).map((request) => request.json());
    expect(sent).toHaveLength(2);
    // The model saw the server's tools, renamed and with their input schemas, never the reference.
    expect(sent[0].tools).toEqual([
      {
        type: "function",
        function: {
          name: "calc__add",
          description: "Adds two numbers",
          parameters: calculatorServer()[0]!.inputSchema,
        },
      },
      { type: "function", function: { name: "calc__fail", parameters: { type: "object", properties: {} } } },
    ]);
    // ...and then its own call and the tool's result.
    expect(sent[1].messages.slice(1)).toEqual([
      {
        role: "assistant",
        content: null,
        tool_calls: [{ id: "call_0", type: "function", function: { name: "calc__add", arguments: '{"a":2,"b":3}' } }],
      },
      { role: "tool", tool_call_id: "call_0", content: "5" },
    ]);
    expect(tools.calls.at(-1)).toEqual({ server: "calc", tool: "add", arguments: { a: 2, b: 3 }, traceId: trace });

    const logs = await logsOf(trace, 2);
    expect(logs.every((log) => log.traceId === trace && log.route === "/v1/chat/completions")).toBe(true);
    // Each model call with its own usage and cost (the request's own record is the last call's).
    const byTokens = logs.sort((a, b) => a.usage.totalTokens - b.usage.totalTokens);
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
        tools: [mcpTool],
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
    await logsOf(trace, 2);
  });

  it("answers 400 naming the tool without the beta header, and calls no model", async () => {
    const before = model.requests.length;
    const error = await client("v1", {})
      .chat.completions.create({
        model: "gpt-4o-mini",
        messages: question,
        tools: [{ type: "function", function: { name: "lookup" } }, mcpTool],
      })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("tools[1]");
    expect(model.requests.length).toBe(before);
  });

  it("answers 404 for an unknown server and 403 for a denied one before any model call", async () => {
    const before = model.requests.length;
    for (const [name, status] of [
      ["@gateway-mcp/nope", 404],
      ["@gateway-mcp/secret", 403],
    ] as const) {
      const error = (await client()
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
      { model: "gpt-4o-mini", messages: question, tools: [mcpTool] },
      options,
    );
    expect(model.requests.length - before).toBe(STEP_LIMIT);
    expect(completion.choices[0]!.finish_reason).toBe("length");
    expect(completion.choices[0]!.message.tool_calls).toBeUndefined();
    expect((completion as any).gateway_mcp).toMatchObject({ steps: STEP_LIMIT, stopped: "max_tool_steps" });
    expect((completion as any).gateway_mcp.tool_calls).toHaveLength(STEP_LIMIT - 1);
    await logsOf(trace, STEP_LIMIT);

    const stream = await client("loop/v1").chat.completions.create({
      model: "gpt-4o-mini",
      messages: question,
      tools: [mcpTool],
      stream: true,
    });
    const chunks: any[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.at(-1).choices[0].finish_reason).toBe("length");
    expect(chunks.some((chunk) => chunk.choices[0]?.delta?.tool_calls)).toBe(false);
  });
});

import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";
import {
  countTokens,
  FaultSwitch,
  fakeEmbedding,
  type MockFault,
  pathOf,
  playFault,
  type SseEvent,
  streamEvents,
} from "./openai.ts";

/**
 * A mock Cohere API: POST /v2/chat (JSON, or SSE when `stream: true`) and POST /v2/embed, with the same fault
 * knobs as the OpenAI mock. Use `x-gateway-custom-host: <mock.url>` with `x-gateway-provider: cohere`.
 */
export interface CohereMockOptions {
  /** The assistant's answer (default "Hello from the mock Cohere."). Streams send one word per content-delta. */
  reply?: string;
  chunkDelayMs?: number;
  /** When the request offers tools (and tool_choice is not "NONE"), call the first tool. Default true. */
  toolCalls?: boolean;
  toolArguments?: Record<string, unknown>;
  /** Embedding size when the request has no output_dimension (default 8). */
  embeddingDimensions?: number;
  /** Require `Authorization: Bearer <apiKey>` (401 otherwise). */
  apiKey?: string;
}

export interface CohereMock extends MockServer {
  options: CohereMockOptions;
  setFault(fault?: MockFault): void;
  reset(): void;
  lastRequest(): RecordedRequest | undefined;
}

const cohereError = (status: number, message?: string) => ({ message: message ?? `mock cohere answered ${status}` });

export async function startCohereMock(options: CohereMockOptions = {}): Promise<CohereMock> {
  const faults = new FaultSwitch();
  const mock = (await startMockServer(async (request, res) => {
    const { apiKey } = mock.options;
    if (apiKey && request.headers.authorization !== `Bearer ${apiKey}`) {
      return sendJson(res, 401, cohereError(401, "invalid api token"));
    }
    const fault = faults.take(request.path);
    if (await playFault(fault, res, (status) => cohereError(status))) return;
    const path = pathOf(request.path);
    let body: any;
    try {
      body = request.json();
    } catch {
      return sendJson(res, 400, cohereError(400, "invalid request: body is not JSON"));
    }
    if (request.method === "POST" && path.endsWith("/v2/chat")) return chat(body, res, mock.options, fault);
    if (request.method === "POST" && path.endsWith("/v2/embed")) return embed(body, res, mock.options);
    return sendJson(res, 404, cohereError(404, `no route ${path}`));
  })) as CohereMock;
  mock.options = options;
  mock.setFault = (fault) => faults.set(fault);
  mock.reset = () => {
    mock.requests.length = 0;
    faults.set(undefined);
  };
  mock.lastRequest = () => mock.requests.at(-1);
  return mock;
}

async function chat(body: any, res: ServerResponse, options: CohereMockOptions, fault: MockFault | undefined) {
  if (!Array.isArray(body.messages) || !body.model)
    return sendJson(res, 400, cohereError(400, "invalid request: model and messages are required"));
  const reply = options.reply ?? "Hello from the mock Cohere.";
  const tool =
    options.toolCalls !== false && body.tool_choice !== "NONE" && Array.isArray(body.tools) && body.tools.length > 0
      ? body.tools[0]
      : undefined;
  const call = tool
    ? {
        id: `${tool.function?.name ?? "tool"}_mock1`,
        type: "function",
        function: { name: tool.function?.name ?? "tool", arguments: JSON.stringify(options.toolArguments ?? {}) },
      }
    : undefined;
  const plan = "I will call the tool.";
  const inputTokens = Math.max(1, countTokens(JSON.stringify(body.messages)));
  const outputTokens = countTokens(call ? plan : reply);
  const usage = {
    billed_units: { input_tokens: inputTokens, output_tokens: outputTokens },
    tokens: { input_tokens: inputTokens + 10, output_tokens: outputTokens },
  };
  const id = "c0a5e8e1-mock-4cbe-9d1b-000000000001";
  const finish = call ? "TOOL_CALL" : "COMPLETE";

  if (!body.stream) {
    const message: Record<string, unknown> = { role: "assistant" };
    if (call) {
      message.tool_plan = plan;
      message.tool_calls = [call];
    } else {
      message.content = [{ type: "text", text: reply }];
    }
    return sendJson(res, 200, { id, message, finish_reason: finish, usage });
  }

  const events: SseEvent[] = [
    {
      event: "message-start",
      data: {
        id,
        type: "message-start",
        delta: { message: { role: "assistant", content: [], tool_plan: "", tool_calls: [], citations: [] } },
      },
    },
  ];
  if (call) {
    events.push({
      event: "tool-plan-delta",
      data: { type: "tool-plan-delta", delta: { message: { tool_plan: plan } } },
    });
    events.push({
      event: "tool-call-start",
      data: {
        type: "tool-call-start",
        index: 0,
        delta: {
          message: {
            tool_calls: { id: call.id, type: "function", function: { name: call.function.name, arguments: "" } },
          },
        },
      },
    });
    events.push({
      event: "tool-call-delta",
      data: {
        type: "tool-call-delta",
        index: 0,
        delta: { message: { tool_calls: { function: { arguments: call.function.arguments } } } },
      },
    });
    events.push({ event: "tool-call-end", data: { type: "tool-call-end", index: 0 } });
  } else {
    events.push({
      event: "content-start",
      data: { type: "content-start", index: 0, delta: { message: { content: { type: "text", text: "" } } } },
    });
    for (const word of reply.split(/(?<= )/)) {
      events.push({
        event: "content-delta",
        data: { type: "content-delta", index: 0, delta: { message: { content: { text: word } } } },
      });
    }
    events.push({ event: "content-end", data: { type: "content-end", index: 0 } });
  }
  events.push({ event: "message-end", data: { type: "message-end", delta: { finish_reason: finish, usage } } });
  await streamEvents(res, events, {
    delayMs: options.chunkDelayMs,
    fault,
    errorEvent: {
      event: "message-end",
      data: { type: "message-end", delta: { finish_reason: "ERROR", error: "mock cohere failed mid-stream", usage } },
    },
  });
}

function embed(body: any, res: ServerResponse, options: CohereMockOptions) {
  if (!Array.isArray(body.texts) || body.texts.length === 0) {
    return sendJson(res, 400, cohereError(400, "invalid request: texts must be a non-empty list"));
  }
  if (!body.input_type) return sendJson(res, 400, cohereError(400, "invalid request: input_type is required"));
  const dimensions = Number(body.output_dimension) || options.embeddingDimensions || 8;
  const tokens = body.texts.reduce((sum: number, text: string) => sum + Math.max(1, countTokens(text)), 0);
  return sendJson(res, 200, {
    id: "emb-mock-1",
    embeddings: { float: body.texts.map((text: string) => fakeEmbedding(text, dimensions)) },
    texts: body.texts,
    meta: { api_version: { version: "2" }, billed_units: { input_tokens: tokens } },
    response_type: "embeddings_by_type",
  });
}

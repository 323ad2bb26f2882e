import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * A mock of Anthropic's Message Batches API (https://docs.anthropic.com/en/api/creating-message-batches) over real
 * HTTP, with a small state machine:
 *   POST /v1/messages/batches              {requests: [{custom_id, params}]} -> message_batch `in_progress`
 *   GET  /v1/messages/batches/{id}         each poll advances the batch; after `pollsToEnd` polls it has `ended`
 *   GET  /v1/messages/batches/{id}/results JSONL, once ended (404-style error before)
 *   POST /v1/messages/batches/{id}/cancel  `canceling`; the next poll ends it with the unfinished requests canceled
 * Requests are checked as Anthropic documents: `x-api-key` and `anthropic-version` headers, custom_id of 1-64
 * characters of [a-zA-Z0-9_-] and unique, params with model, messages and max_tokens, no `stream`. Each request is
 * answered with a message echoing its last user text; a request whose model is `error-model` errors
 * (invalid_request_error). With `expire: true` the batch ends with every request expired.
 */
export interface AnthropicBatchesMockOptions {
  pollsToEnd?: number;
  expire?: boolean;
}

interface MockBatch {
  id: string;
  requests: Array<{ custom_id: string; params: any }>;
  polls: number;
  status: "in_progress" | "canceling" | "ended";
  canceled: boolean;
  created_at: string;
  cancel_initiated_at: string | null;
  ended_at: string | null;
}

export interface AnthropicBatchesMock extends MockServer {
  batches: Map<string, MockBatch>;
  options: AnthropicBatchesMockOptions;
}

const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

function anthropicError(res: ServerResponse, status: number, type: string, message: string): void {
  sendJson(res, status, { type: "error", error: { type, message } }, { "request-id": "req_mock_batches" });
}

function lastUserText(params: any): string {
  const messages = Array.isArray(params?.messages) ? params.messages : [];
  const last = [...messages].reverse().find((message: any) => message?.role === "user");
  if (typeof last?.content === "string") return last.content;
  const block = Array.isArray(last?.content) ? last.content.find((item: any) => item?.type === "text") : undefined;
  return block?.text ?? "";
}

export async function startAnthropicBatchesMock(
  options: AnthropicBatchesMockOptions = {},
): Promise<AnthropicBatchesMock> {
  const batches = new Map<string, MockBatch>();
  let next = 0;
  let url = "";

  const view = (batch: MockBatch) => {
    const ended = batch.status === "ended";
    const outcome = (request: MockBatch["requests"][number]) =>
      batch.canceled
        ? "canceled"
        : mock.options.expire
          ? "expired"
          : request.params.model === "error-model"
            ? "errored"
            : "succeeded";
    const counts = { processing: 0, succeeded: 0, errored: 0, canceled: 0, expired: 0 };
    for (const request of batch.requests) {
      if (!ended) counts.processing++;
      else counts[outcome(request)]++;
    }
    return {
      id: batch.id,
      type: "message_batch",
      processing_status: batch.status,
      request_counts: counts,
      ended_at: batch.ended_at,
      created_at: batch.created_at,
      expires_at: new Date(Date.parse(batch.created_at) + 86_400_000).toISOString(),
      archived_at: null,
      cancel_initiated_at: batch.cancel_initiated_at,
      results_url: ended ? `${url}/v1/messages/batches/${batch.id}/results` : null,
      _outcome: outcome,
    };
  };

  const present = (batch: MockBatch) => {
    const { _outcome, ...body } = view(batch);
    return body;
  };

  const resultOf = (batch: MockBatch, request: MockBatch["requests"][number]) => {
    const outcome = view(batch)._outcome(request);
    if (outcome === "succeeded") {
      const text = `You said: ${lastUserText(request.params)}`;
      return {
        type: "succeeded",
        message: {
          id: `msg_mock_${batch.id.slice(-6)}_${request.custom_id}`,
          type: "message",
          role: "assistant",
          model: request.params.model,
          content: [{ type: "text", text }],
          stop_reason: "end_turn",
          stop_sequence: null,
          usage: { input_tokens: 10, output_tokens: text.split(/\s+/).length },
        },
      };
    }
    if (outcome === "errored") {
      return {
        type: "errored",
        error: { type: "error", error: { type: "invalid_request_error", message: "model: unknown model error-model" } },
      };
    }
    return { type: outcome };
  };

  const route = async (request: RecordedRequest, res: ServerResponse) => {
    if (!request.headers["x-api-key"]) return anthropicError(res, 401, "authentication_error", "invalid x-api-key");
    if (!request.headers["anthropic-version"]) {
      return anthropicError(res, 400, "invalid_request_error", "anthropic-version: header is required");
    }
    const path = request.path.split("?")[0]!;
    if (request.method === "POST" && path === "/v1/messages/batches") {
      let body: any;
      try {
        body = request.json();
      } catch {
        return anthropicError(res, 400, "invalid_request_error", "request body is not valid JSON");
      }
      const requests = body?.requests;
      if (!Array.isArray(requests) || requests.length === 0) {
        return anthropicError(res, 400, "invalid_request_error", "requests: at least one request is required");
      }
      const seen = new Set<string>();
      for (const [index, item] of requests.entries()) {
        if (typeof item?.custom_id !== "string" || !CUSTOM_ID.test(item.custom_id) || seen.has(item.custom_id)) {
          return anthropicError(res, 400, "invalid_request_error", `requests.${index}.custom_id: invalid or duplicate`);
        }
        seen.add(item.custom_id);
        const params = item.params;
        if (!params?.model || !Array.isArray(params.messages) || typeof params.max_tokens !== "number") {
          return anthropicError(
            res,
            400,
            "invalid_request_error",
            `requests.${index}.params: model, messages and max_tokens are required`,
          );
        }
        if ("stream" in params) {
          return anthropicError(res, 400, "invalid_request_error", `requests.${index}.params.stream: not allowed`);
        }
      }
      const batch: MockBatch = {
        id: `msgbatch_mock${String(++next).padStart(6, "0")}`,
        requests,
        polls: 0,
        status: "in_progress",
        canceled: false,
        created_at: new Date().toISOString(),
        cancel_initiated_at: null,
        ended_at: null,
      };
      batches.set(batch.id, batch);
      return sendJson(res, 200, present(batch));
    }
    const match = /^\/v1\/messages\/batches\/([^/]+)(\/results|\/cancel)?$/.exec(path);
    const batch = match ? batches.get(decodeURIComponent(match[1]!)) : undefined;
    if (!match || !batch) return anthropicError(res, 404, "not_found_error", `${request.method} ${path} not found`);
    const action = match[2];
    if (request.method === "GET" && !action) {
      batch.polls++;
      if (
        batch.status === "canceling" ||
        (batch.status === "in_progress" && batch.polls >= (mock.options.pollsToEnd ?? 2))
      ) {
        batch.status = "ended";
        batch.ended_at = new Date().toISOString();
      }
      return sendJson(res, 200, present(batch));
    }
    if (request.method === "GET" && action === "/results") {
      if (batch.status !== "ended") {
        return anthropicError(res, 400, "invalid_request_error", "results are not available until the batch has ended");
      }
      res.writeHead(200, { "content-type": "application/binary" });
      for (const item of batch.requests) {
        res.write(`${JSON.stringify({ custom_id: item.custom_id, result: resultOf(batch, item) })}\n`);
      }
      res.end();
      return;
    }
    if (request.method === "POST" && action === "/cancel") {
      if (batch.status === "in_progress") {
        batch.status = "canceling";
        batch.canceled = true;
        batch.cancel_initiated_at = new Date().toISOString();
      }
      return sendJson(res, 200, present(batch));
    }
    return anthropicError(res, 405, "invalid_request_error", `${request.method} not allowed`);
  };

  const mock = (await startMockServer(route)) as AnthropicBatchesMock;
  url = mock.url;
  mock.batches = batches;
  mock.options = options;
  return mock;
}

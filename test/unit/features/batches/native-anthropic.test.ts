import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anthropicBatches } from "../../../../core/features/batches/native/anthropic.ts";
import { nativeBatchApiFor } from "../../../../core/features/batches/native/registry.ts";
import type { NativeBatchState } from "../../../../core/features/batches/types.ts";
import { type MockServer, sendJson, startMockServer } from "../../../helpers/mock-server.ts";
import { type AnthropicBatchesMock, startAnthropicBatchesMock } from "../../../mocks/anthropic-batches.ts";
import { collect, contextOf, submissionOf } from "./native-submission.ts";

const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "claude-sonnet-4-5",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: text },
  ],
  ...extra,
});

describe("anthropic native batches", () => {
  let mock: AnthropicBatchesMock;
  beforeAll(async () => {
    mock = await startAnthropicBatchesMock({ pollsToEnd: 2 });
  });
  afterAll(() => mock.close());

  const ctx = () => contextOf({ provider: "anthropic", apiKey: "sk-ant-test", customHost: mock.url });

  it("is registered and supports chat and messages only", async () => {
    const api = await nativeBatchApiFor("anthropic");
    expect(api).toBe(anthropicBatches);
    const target = { provider: "anthropic" };
    expect(api!.supports(target, "/v1/chat/completions")).toBe(true);
    expect(api!.supports(target, "/v1/messages")).toBe(true);
    expect(api!.supports(target, "/v1/embeddings")).toBe(false);
    expect(api!.supports({ provider: "openai" }, "/v1/chat/completions")).toBe(false);
  });

  it("translates chat lines, polls to the end and answers chat completions", async () => {
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "req-1", body: chat("first") },
      { custom_id: "req-2", body: chat("second", { max_tokens: 50, stream: true }) },
      { custom_id: "req-3", body: chat("third", { model: "error-model" }) },
    ]);
    const submitted = await anthropicBatches.submit(submission, ctx());
    expect(submitted.providerBatchId).toMatch(/^msgbatch_/);
    expect(submitted.state.status).toBe("in_progress");
    expect(submitted.state.request_counts).toEqual({ total: 3, completed: 0, failed: 0 });

    const sent = mock.requests.find((request) => request.method === "POST")!;
    expect(sent.headers["x-api-key"]).toBe("sk-ant-test");
    const requests = sent.json().requests;
    expect(requests.map((item: any) => item.custom_id)).toEqual(["req-1", "req-2", "req-3"]);
    // The chat transform: system moved out of messages, max_tokens defaulted or kept, no stream.
    expect(requests[0].params).toMatchObject({
      model: "claude-sonnet-4-5",
      system: "Be brief.",
      messages: [{ role: "user", content: "first" }],
      max_tokens: 4096,
    });
    expect(requests[1].params.max_tokens).toBe(50);
    expect("stream" in requests[1].params).toBe(false);

    let state: NativeBatchState = submitted.state;
    state = await anthropicBatches.poll(submitted.providerBatchId, state, ctx());
    expect(state.status).toBe("in_progress");
    state = await anthropicBatches.poll(submitted.providerBatchId, state, ctx());
    expect(state.status).toBe("completed");
    expect(state.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    const results = await collect(anthropicBatches.results(submitted.providerBatchId, state, ctx()));
    const byId = new Map(results.map((line) => [line.custom_id, line]));
    expect(byId.size).toBe(3);
    const first = byId.get("req-1")!;
    expect(first.error).toBeNull();
    expect(first.id).toMatch(/^batch_req_/);
    expect(first.response?.status_code).toBe(200);
    expect(first.response?.body).toMatchObject({
      object: "chat.completion",
      model: "claude-sonnet-4-5",
      choices: [{ message: { role: "assistant", content: "You said: first" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10 },
    });
    const failed = byId.get("req-3")!;
    expect(failed.response?.status_code).toBe(400);
    expect(failed.response?.body).toMatchObject({ error: { type: "invalid_request_error" } });
    // Reading the results twice gives the same line ids (a finalisation that runs again agrees with itself).
    const again = await collect(anthropicBatches.results(submitted.providerBatchId, state, ctx()));
    expect(again.map((line) => line.id).sort()).toEqual(results.map((line) => line.id).sort());
  });

  it("sends /v1/messages lines as they are and answers messages", async () => {
    const params = { model: "claude-sonnet-4-5", max_tokens: 64, messages: [{ role: "user", content: "hello" }] };
    const submission = submissionOf("/v1/messages", [{ custom_id: "m1", body: { ...params, stream: false } }]);
    const { providerBatchId, state } = await anthropicBatches.submit(submission, ctx());
    expect(mock.batches.get(providerBatchId)!.requests[0]!.params).toEqual(params);
    let current = state;
    while (current.status === "in_progress") current = await anthropicBatches.poll(providerBatchId, current, ctx());
    const [line] = await collect(anthropicBatches.results(providerBatchId, current, ctx()));
    expect(line!.response?.body).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "You said: hello" }],
    });
  });

  it("renames custom_ids Anthropic refuses and restores them in the results", async () => {
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "has spaces and/slashes", body: chat("a") },
      { custom_id: "gw-line-7", body: chat("b") },
      { custom_id: "x".repeat(80), body: chat("c") },
    ]);
    const { providerBatchId, state } = await anthropicBatches.submit(submission, ctx());
    const sentIds = mock.batches.get(providerBatchId)!.requests.map((item) => item.custom_id);
    expect(sentIds).toEqual(["gw-line-1", "gw-line-2", "gw-line-3"]);
    let current = state;
    while (current.status === "in_progress") current = await anthropicBatches.poll(providerBatchId, current, ctx());
    const results = await collect(anthropicBatches.results(providerBatchId, current, ctx()));
    expect(results.map((line) => line.custom_id).sort()).toEqual([
      "gw-line-7",
      "has spaces and/slashes",
      "x".repeat(80),
    ]);
  });

  it("answers lines the transform refuses as 400 errors without sending them", async () => {
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "ok", body: chat("fine") },
      { custom_id: "n2", body: chat("two answers", { n: 2 }) },
    ]);
    const { providerBatchId, state } = await anthropicBatches.submit(submission, ctx());
    expect(mock.batches.get(providerBatchId)!.requests.map((item) => item.custom_id)).toEqual(["ok"]);
    expect(state.request_counts).toEqual({ total: 2, completed: 0, failed: 1 });
    let current = state;
    while (current.status === "in_progress") current = await anthropicBatches.poll(providerBatchId, current, ctx());
    const results = await collect(anthropicBatches.results(providerBatchId, current, ctx()));
    const refused = results.find((line) => line.custom_id === "n2")!;
    expect(refused.response?.status_code).toBe(400);
    expect(refused.response?.body).toMatchObject({ error: { code: "unsupported_parameter" } });
  });

  it("cancels: canceling, then cancelled with the unfinished requests as batch_cancelled errors", async () => {
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "c1", body: chat("x") }]);
    const { providerBatchId, state } = await anthropicBatches.submit(submission, ctx());
    await anthropicBatches.cancel(providerBatchId, state, ctx());
    const polled = await anthropicBatches.poll(providerBatchId, state, ctx());
    expect(polled.status).toBe("cancelled");
    const [line] = await collect(anthropicBatches.results(providerBatchId, polled, ctx()));
    expect(line).toMatchObject({ custom_id: "c1", response: null, error: { code: "batch_cancelled" } });
  });

  it("maps an expired batch to expired with batch_expired lines", async () => {
    mock.options.expire = true;
    try {
      const submission = submissionOf("/v1/chat/completions", [{ custom_id: "e1", body: chat("late") }]);
      const { providerBatchId, state } = await anthropicBatches.submit(submission, ctx());
      let current = state;
      while (current.status === "in_progress") current = await anthropicBatches.poll(providerBatchId, current, ctx());
      expect(current.status).toBe("expired");
      expect(current.request_counts).toEqual({ total: 1, completed: 0, failed: 1 });
      const [line] = await collect(anthropicBatches.results(providerBatchId, current, ctx()));
      expect(line!.error?.code).toBe("batch_expired");
    } finally {
      mock.options.expire = false;
    }
  });

  it("surfaces the provider's errors without the credential", async () => {
    const noKey = contextOf({ provider: "anthropic", customHost: mock.url });
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }]);
    await expect(anthropicBatches.submit(submission, noKey)).rejects.toMatchObject({ status: 401 });
    const error = await anthropicBatches
      .submit(
        submission,
        contextOf({ provider: "anthropic", apiKey: "sk-secret-1", customHost: `${mock.url}/nowhere` }),
      )
      .catch((e) => e);
    expect(error.status).toBe(404);
    expect(String(error.message)).not.toContain("sk-secret-1");
  });
});

describe("anthropic results fixture (documented wire format)", () => {
  let server: MockServer;
  beforeAll(async () => {
    const jsonl = readFileSync(
      new URL("../../../fixtures/anthropic/message-batch-results.jsonl", import.meta.url),
      "utf8",
    );
    const batch = JSON.parse(
      readFileSync(new URL("../../../fixtures/anthropic/message-batch.json", import.meta.url), "utf8"),
    );
    server = await startMockServer((request, res) => {
      if (request.path.endsWith("/results")) {
        res.writeHead(200, { "content-type": "application/binary" });
        // Two chunks split inside a line: the reader must join them.
        const cut = Math.floor(jsonl.length / 2);
        res.write(jsonl.slice(0, cut));
        setTimeout(() => res.end(jsonl.slice(cut)), 10);
        return;
      }
      sendJson(res, 200, batch);
    });
  });
  afterAll(() => server.close());

  it("maps each documented result type", async () => {
    const ctx = contextOf({ provider: "anthropic", apiKey: "k", customHost: server.url });
    const polled = await anthropicBatches.poll(
      "msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d",
      { status: "in_progress", details: { endpoint: "/v1/chat/completions" } },
      ctx,
    );
    expect(polled).toMatchObject({ status: "in_progress", request_counts: { total: 2, completed: 0, failed: 0 } });
    const lines = await collect(anthropicBatches.results("msgbatch_01HkcTjaV5uDC8jWR4ZsDV8d", polled, ctx));
    expect(lines.map((line) => [line.custom_id, line.response?.status_code ?? line.error?.code])).toEqual([
      ["my-first-request", 200],
      ["my-second-request", 400],
      ["my-third-request", "batch_cancelled"],
      ["my-fourth-request", "batch_expired"],
    ]);
    expect(lines[0]!.response).toMatchObject({
      request_id: "msg_014VwiXbi91y3JMjcpyGBHX5",
      body: { object: "chat.completion", usage: { prompt_tokens: 11, completion_tokens: 36, total_tokens: 47 } },
    });
    expect(lines[1]!.response?.body).toEqual({
      error: {
        message: "Validation error: messages: field required",
        type: "invalid_request_error",
        param: null,
        code: "invalid_request_error",
      },
    });
  });
});

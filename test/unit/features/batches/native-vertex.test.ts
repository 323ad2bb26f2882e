import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { nativeBatchApiFor } from "../../../../core/features/batches/native/registry.ts";
import { vertexBatches } from "../../../../core/features/batches/native/vertex.ts";
import type { NativeBatchState } from "../../../../core/features/batches/types.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import { clearVertexTokenCache } from "../../../../core/providers/vertex/auth.ts";
import { createTestServiceAccount } from "../../../mocks/vertex.ts";
import { startVertexBatchesMock, type VertexBatchesMock } from "../../../mocks/vertex-batches.ts";
import { collect, contextOf, submissionOf } from "./native-submission.ts";

const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  model: "gemini-2.0-flash",
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: text },
  ],
  ...extra,
});

describe("vertex-ai native batches", () => {
  let mock: VertexBatchesMock;
  beforeAll(async () => {
    mock = await startVertexBatchesMock({ pollsToEnd: 2, pageSize: 1 });
  });
  afterAll(() => mock.close());
  beforeEach(() => {
    mock.options.failJob = false;
  });

  const target = (extra: Partial<ProviderTarget> = {}): ProviderTarget => ({
    provider: "vertex-ai",
    apiKey: mock.accessToken,
    customHost: mock.url,
    vertex: { projectId: "my-project", region: "europe-west4", storageBucket: "batch-bucket" },
    ...extra,
  });
  const ctx = (extra: Partial<ProviderTarget> = {}) => contextOf(target(extra));

  async function runToEnd(providerBatchId: string, state: NativeBatchState, context = ctx()) {
    let current = state;
    for (let round = 0; round < 10 && ["in_progress", "cancelling"].includes(current.status); round++) {
      current = await vertexBatches.poll(providerBatchId, current, context);
    }
    return current;
  }

  it("is registered and supports chat when a storage bucket is given", async () => {
    const api = await nativeBatchApiFor("vertex-ai");
    expect(api).toBe(vertexBatches);
    expect(api!.supports(target(), "/v1/chat/completions")).toBe(true);
    expect(api!.supports(target(), "/v1/embeddings")).toBe(false);
    expect(api!.supports({ provider: "vertex-ai", vertex: { projectId: "p" } }, "/v1/chat/completions")).toBe(false);
    expect(
      api!.supports({ provider: "vertex-ai", vertex: { storageBucket: "Not A Bucket/" } }, "/v1/chat/completions"),
    ).toBe(false);
    expect(api!.supports({ provider: "google", vertex: { storageBucket: "b-1" } }, "/v1/chat/completions")).toBe(false);
  });

  it("uploads Gemini requests to GCS, creates the job, polls it and answers chat completions", async () => {
    const submission = submissionOf(
      "/v1/chat/completions",
      [
        { custom_id: "req-1", body: chat("first", { max_tokens: 50 }) },
        { custom_id: "Req 2/upper", body: chat("second") },
        { custom_id: "req-3", body: chat("please fail") },
      ],
      { batchId: "batch_vertex_1" },
    );
    const submitted = await vertexBatches.submit(submission, ctx());
    expect(submitted.providerBatchId).toMatch(/^\d+$/);
    expect(submitted.state.status).toBe("in_progress");
    expect(submitted.state.request_counts).toEqual({ total: 3, completed: 0, failed: 0 });

    // The input object: one `{"request": ...}` line per chat line, the custom_id in the labels (renamed when it is
    // no label value), the system prompt moved to systemInstruction, max_tokens to generationConfig.
    const input = mock.objects.get("batch-bucket/gateway-batches/batch_vertex_1/input.jsonl")!.toString("utf8");
    const sent = input
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(sent.map((line) => line.request.labels.gateway_custom_id)).toEqual(["req-1", "gw-line-2", "req-3"]);
    expect(sent[0].request).toMatchObject({
      contents: [{ role: "user", parts: [{ text: "first" }] }],
      systemInstruction: { parts: [{ text: "Be brief." }] },
      generationConfig: { maxOutputTokens: 50 },
    });
    expect("model" in sent[0].request).toBe(false);

    // The job: the documented body, in the target's project and region, authenticated.
    const create = mock.requests.find((request) => request.path.endsWith("/batchPredictionJobs"))!;
    expect(create.path).toBe("/v1/projects/my-project/locations/europe-west4/batchPredictionJobs");
    expect(create.headers.authorization).toBe(`Bearer ${mock.accessToken}`);
    expect(create.json()).toEqual({
      displayName: "batch_vertex_1",
      model: "publishers/google/models/gemini-2.0-flash",
      inputConfig: {
        instancesFormat: "jsonl",
        gcsSource: { uris: ["gs://batch-bucket/gateway-batches/batch_vertex_1/input.jsonl"] },
      },
      outputConfig: {
        predictionsFormat: "jsonl",
        gcsDestination: { outputUriPrefix: "gs://batch-bucket/gateway-batches/batch_vertex_1/output" },
      },
    });

    let state = await vertexBatches.poll(submitted.providerBatchId, submitted.state, ctx());
    expect(state.status).toBe("in_progress");
    state = await vertexBatches.poll(submitted.providerBatchId, state, ctx());
    expect(state.status).toBe("completed");
    expect(state.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    const results = await collect(vertexBatches.results(submitted.providerBatchId, state, ctx()));
    const byId = new Map(results.map((line) => [line.custom_id, line]));
    expect([...byId.keys()].sort()).toEqual(["Req 2/upper", "req-1", "req-3"]);
    const first = byId.get("req-1")!;
    expect(first.error).toBeNull();
    expect(first.id).toMatch(/^batch_req_/);
    expect(first.response?.status_code).toBe(200);
    expect(first.response?.body).toMatchObject({
      object: "chat.completion",
      model: "gemini-2.0-flash",
      choices: [{ message: { role: "assistant", content: "You said: first" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 8, completion_tokens: 5, total_tokens: 13 },
    });
    expect(byId.get("Req 2/upper")!.response?.body).toMatchObject({
      choices: [{ message: { content: "You said: second" } }],
    });
    expect(byId.get("req-3")).toMatchObject({
      response: null,
      error: { code: "vertex_request_failed", message: "Bad Request: Mock refused this request." },
    });
    // The listing was read page by page (the mock's pages hold one object) and only .jsonl objects were read.
    const downloads = mock.requests.filter((request) => request.path.includes("alt=media"));
    expect(downloads.map((request) => decodeURIComponent(request.path))).toEqual([
      expect.stringMatching(
        /\/o\/gateway-batches\/batch_vertex_1\/output\/prediction-model-[^/]+\/predictions\.jsonl\?alt=media$/,
      ),
    ]);
    // Reading twice gives the same line ids.
    const again = await collect(vertexBatches.results(submitted.providerBatchId, state, ctx()));
    expect(again.map((line) => line.id).sort()).toEqual(results.map((line) => line.id).sort());
  });

  it("exchanges a service account key for the bearer token", async () => {
    clearVertexTokenCache();
    const account = await createTestServiceAccount(mock.tokenUri, "sa-project");
    const context = ctx({
      apiKey: undefined,
      vertex: { serviceAccountJson: account.json, storageBucket: "sa-bucket" },
    });
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "s1", body: chat("hi") }], {
      batchId: "batch_vertex_sa",
    });
    const { providerBatchId, state } = await vertexBatches.submit(submission, context);
    expect(mock.requests.some((request) => request.path === "/token")).toBe(true);
    expect(mock.jobs.get(providerBatchId)!.name).toMatch(/^projects\/sa-project\/locations\/us-central1\//);
    const done = await runToEnd(providerBatchId, state, context);
    const [line] = await collect(vertexBatches.results(providerBatchId, done, context));
    expect(line!.response?.body).toMatchObject({ choices: [{ message: { content: "You said: hi" } }] });
  });

  it("refuses a batch whose lines name different or non-Gemini models", async () => {
    const mixed = submissionOf("/v1/chat/completions", [
      { custom_id: "a", body: chat("x") },
      { custom_id: "b", body: chat("y", { model: "gemini-1.5-pro" }) },
    ]);
    await expect(vertexBatches.submit(mixed, ctx())).rejects.toMatchObject({ status: 400, code: "invalid_model" });
    const claude = submissionOf("/v1/chat/completions", [
      { custom_id: "a", body: chat("x", { model: "claude-3-5-haiku@20241022" }) },
    ]);
    await expect(vertexBatches.submit(claude, ctx())).rejects.toMatchObject({ status: 400, code: "invalid_model" });
  });

  it("answers lines the transform refuses as errors and sends the others", async () => {
    const orphanTool = {
      model: "gemini-2.0-flash",
      messages: [
        { role: "user", content: "x" },
        { role: "tool", tool_call_id: "call_missing", content: "42" },
      ],
    };
    const submission = submissionOf(
      "/v1/chat/completions",
      [
        { custom_id: "ok-1", body: chat("fine") },
        { custom_id: "bad-1", body: orphanTool },
      ],
      { batchId: "batch_vertex_refused" },
    );
    const { providerBatchId, state } = await vertexBatches.submit(submission, ctx());
    expect(state.request_counts).toEqual({ total: 2, completed: 0, failed: 1 });
    const input = mock.objects.get("batch-bucket/gateway-batches/batch_vertex_refused/input.jsonl")!.toString("utf8");
    expect(input.trim().split("\n")).toHaveLength(1);
    const done = await runToEnd(providerBatchId, state);
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });
    const results = await collect(vertexBatches.results(providerBatchId, done, ctx()));
    const refused = results.find((line) => line.custom_id === "bad-1")!;
    expect(refused.response).toMatchObject({ status_code: 400, body: { error: { type: "invalid_request_error" } } });
    expect(results.find((line) => line.custom_id === "ok-1")!.response?.status_code).toBe(200);
  });

  it("needs a bucket", async () => {
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }]);
    await expect(vertexBatches.submit(submission, ctx({ vertex: { projectId: "my-project" } }))).rejects.toMatchObject({
      status: 400,
    });
  });

  it("a failed job fails the batch with the provider's message", async () => {
    mock.options.failJob = true;
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "f1", body: chat("x") }], {
      batchId: "batch_vertex_failed",
    });
    const { providerBatchId, state } = await vertexBatches.submit(submission, ctx());
    const done = await runToEnd(providerBatchId, state);
    expect(done.status).toBe("failed");
    expect(done.errors).toEqual([
      {
        code: "provider_batch_failed",
        message: "Mock: the batch job failed to read its input.",
        param: null,
        line: null,
      },
    ]);
  });

  it("cancel reaches the job", async () => {
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "c1", body: chat("x") }], {
      batchId: "batch_vertex_cancel",
    });
    const { providerBatchId, state } = await vertexBatches.submit(submission, ctx());
    await vertexBatches.cancel(providerBatchId, state, ctx());
    expect(mock.jobs.get(providerBatchId)!.state).toBe("JOB_STATE_CANCELLING");
    const cancelled = await runToEnd(providerBatchId, state);
    expect(cancelled.status).toBe("cancelled");
    expect(await collect(vertexBatches.results(providerBatchId, cancelled, ctx()))).toEqual([]);
  });

  it("provider errors surface without the bearer token", async () => {
    const error = await vertexBatches
      .poll("999999", { status: "in_progress", details: { total: 1 } }, ctx())
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ status: 404 });
    expect(String((error as Error).message)).not.toContain(mock.accessToken);
  });
});

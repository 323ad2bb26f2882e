import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { nativeBatchApiFor } from "../../../../core/features/batches/native/registry.ts";
import { openAIBatches } from "../../../../core/features/batches/native/openai.ts";
import type { NativeBatchState } from "../../../../core/features/batches/types.ts";
import { providerKeyOf } from "../../../../core/providers/account-key.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import { type OpenAIBatchesMock, startOpenAIBatchesMock } from "../../../mocks/openai-batches.ts";
import { collect, contextOf, submissionOf } from "./native-submission.ts";

const chat = (text: string, model = "gpt-4o-mini") => ({ model, messages: [{ role: "user", content: text }] });

async function runToEnd(providerBatchId: string, state: NativeBatchState, target: ProviderTarget) {
  let current = state;
  for (let i = 0; i < 10 && !["completed", "failed", "cancelled", "expired"].includes(current.status); i++) {
    current = await openAIBatches.poll(providerBatchId, current, contextOf(target));
  }
  return current;
}

describe("openai native batches", () => {
  let mock: OpenAIBatchesMock;
  beforeAll(async () => {
    mock = await startOpenAIBatchesMock({ apiKey: "sk-openai-test", pollsToComplete: 2 });
  });
  afterAll(() => mock.close());

  const target = (): ProviderTarget => ({ provider: "openai", apiKey: "sk-openai-test", customHost: `${mock.url}/v1` });

  it("is registered for openai, groq and azure-openai with the endpoints their batch APIs take", async () => {
    for (const id of ["openai", "groq", "azure-openai"]) expect(await nativeBatchApiFor(id)).toBe(openAIBatches);
    expect(await nativeBatchApiFor("together-ai")).toBeUndefined();
    const openai = { provider: "openai" };
    for (const endpoint of ["/v1/chat/completions", "/v1/completions", "/v1/embeddings", "/v1/responses"] as const) {
      expect(openAIBatches.supports(openai, endpoint)).toBe(true);
    }
    expect(openAIBatches.supports(openai, "/v1/messages")).toBe(false);
    expect(openAIBatches.supports({ provider: "groq" }, "/v1/chat/completions")).toBe(true);
    expect(openAIBatches.supports({ provider: "groq" }, "/v1/embeddings")).toBe(false);
    const azure = { provider: "azure-openai", azure: { resourceName: "r" } };
    expect(openAIBatches.supports(azure, "/v1/chat/completions")).toBe(true);
    expect(openAIBatches.supports(azure, "/v1/embeddings")).toBe(false);
    expect(openAIBatches.supports({ ...azure, azure: { apiVersion: "v1" } }, "/v1/embeddings")).toBe(true);
    expect(openAIBatches.supports({ provider: "mistral-ai" }, "/v1/chat/completions")).toBe(false);
  });

  it("uploads the input file as it is, creates, polls and streams output and error lines", async () => {
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "a", body: chat("one") },
      { custom_id: "b", body: chat("two", "error-model") },
      { custom_id: "c", body: chat("three") },
    ]);
    const submitted = await openAIBatches.submit(submission, contextOf(target()));
    expect(submitted.providerBatchId).toMatch(/^batch_mock/);
    expect(submitted.state.status).toBe("validating");
    // The upload is new: the engine links it to the gateway's file.
    const uploaded = mock.files.files.get(submitted.providerFileId!)!;
    expect(uploaded.purpose).toBe("batch");
    expect(uploaded.content.toString()).toBe(await new Response(await submission.content()).text());
    const created = mock.batches.get(submitted.providerBatchId)!;
    expect(created).toMatchObject({
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
      metadata: { team: "tests", gateway_batch_id: "batch_gateway_1" },
    });

    const done = await runToEnd(submitted.providerBatchId, submitted.state, target());
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    const results = await collect(openAIBatches.results(submitted.providerBatchId, done, contextOf(target())));
    expect(results.map((line) => line.custom_id).sort()).toEqual(["a", "b", "c"]);
    const a = results.find((line) => line.custom_id === "a")!;
    expect(a.response).toMatchObject({
      status_code: 200,
      body: { object: "chat.completion", choices: [{ message: { content: "Batch answer to: one" } }] },
    });
    expect(results.find((line) => line.custom_id === "b")!.response?.status_code).toBe(404);
  });

  it("reuses the copy already linked for this account instead of uploading again", async () => {
    const before = mock.files.files.size;
    const first = submissionOf("/v1/embeddings", [
      { custom_id: "e", body: { model: "text-embedding-3-small", input: "hi" } },
    ]);
    const { providerFileId } = await openAIBatches.submit(first, contextOf(target()));
    expect(mock.files.files.size).toBe(before + 1);
    const linked = submissionOf(
      "/v1/embeddings",
      [{ custom_id: "e", body: { model: "text-embedding-3-small", input: "hi" } }],
      {
        providerFiles: { [providerKeyOf(target())]: providerFileId! },
      },
    );
    const again = await openAIBatches.submit(linked, contextOf(target()));
    expect(again.providerFileId).toBeUndefined();
    expect(mock.files.files.size).toBe(before + 1);
    expect(mock.batches.get(again.providerBatchId)!.input_file_id).toBe(providerFileId);
    const done = await runToEnd(again.providerBatchId, again.state, target());
    const [line] = await collect(openAIBatches.results(again.providerBatchId, done, contextOf(target())));
    expect(line!.response?.body).toMatchObject({ object: "list", data: [{ object: "embedding" }] });
  });

  it("reports a batch the provider failed with its errors (line numbers kept)", async () => {
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "same", body: chat("one") },
      { custom_id: "same", body: chat("two") },
    ]);
    const { providerBatchId, state } = await openAIBatches.submit(submission, contextOf(target()));
    const done = await runToEnd(providerBatchId, state, target());
    expect(done.status).toBe("failed");
    expect(done.errors).toEqual([
      { code: "duplicate_custom_id", message: "custom_id must be a unique string.", param: "custom_id", line: 2 },
    ]);
    expect(await collect(openAIBatches.results(providerBatchId, done, contextOf(target())))).toEqual([]);
  });

  it("cancels", async () => {
    const submission = submissionOf("/v1/responses", [{ custom_id: "r", body: { model: "gpt-4o", input: "hi" } }]);
    const { providerBatchId, state } = await openAIBatches.submit(submission, contextOf(target()));
    await openAIBatches.cancel(providerBatchId, state, contextOf(target()));
    expect(mock.batches.get(providerBatchId)!.status).toBe("cancelling");
    const polled = await openAIBatches.poll(providerBatchId, state, contextOf(target()));
    expect(polled.status).toBe("cancelled");
  });

  it("answers the provider's refusal as an UpstreamError without the key", async () => {
    const wrongKey = { ...target(), apiKey: "sk-wrong-secret" };
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }]);
    const error = await openAIBatches.submit(submission, contextOf(wrongKey)).catch((e) => e);
    expect(error.status).toBe(401);
    expect(JSON.stringify({ message: error.message })).not.toContain("sk-wrong-secret");
  });
});

describe("azure openai native batches", () => {
  let mock: OpenAIBatchesMock;
  beforeAll(async () => {
    mock = await startOpenAIBatchesMock({ apiKey: "azure-key-1", azure: true, deployments: ["gpt4o-batch"] });
  });
  afterAll(() => mock.close());

  it("uploads a rewritten copy (deployment as model, Azure's url) under a dated api-version", async () => {
    const target: ProviderTarget = {
      provider: "azure-openai",
      apiKey: "azure-key-1",
      customHost: mock.url,
      azure: { deploymentId: "gpt4o-batch", apiVersion: "2024-06-01" },
    };
    const submission = submissionOf("/v1/chat/completions", [
      { custom_id: "t1", body: chat("first", "gpt-4o") },
      { custom_id: "t2", body: chat("second", "gpt-4o") },
    ]);
    const submitted = await openAIBatches.submit(submission, contextOf(target));
    // Azure's capitalised status and null counts on create are understood.
    expect(submitted.state.status).toBe("validating");
    expect(submitted.state.request_counts).toEqual({ total: 0, completed: 0, failed: 0 });
    // A rewritten copy is never linked to the gateway's file.
    expect(submitted.providerFileId).toBeUndefined();
    const created = mock.batches.get(submitted.providerBatchId)!;
    const sentLines = mock
      .fileText(created.input_file_id)
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(sentLines).toEqual([
      { custom_id: "t1", method: "POST", url: "/chat/completions", body: chat("first", "gpt4o-batch") },
      { custom_id: "t2", method: "POST", url: "/chat/completions", body: chat("second", "gpt4o-batch") },
    ]);
    const batchCall = mock.requests.find(
      (request) => request.method === "POST" && request.path.includes("/openai/batches"),
    )!;
    expect(batchCall.path).toContain("api-version=2024-10-21");
    expect(batchCall.headers["api-key"]).toBe("azure-key-1");
    expect(batchCall.json().endpoint).toBe("/chat/completions");

    const done = await runToEnd(submitted.providerBatchId, submitted.state, target);
    expect(done.status).toBe("completed");
    const results = await collect(openAIBatches.results(submitted.providerBatchId, done, contextOf(target)));
    expect(results.map((line) => [line.custom_id, line.response?.status_code])).toEqual([
      ["t1", 200],
      ["t2", 200],
    ]);
  });

  it("speaks the v1 API: /openai/v1 paths and /v1 urls in lines", async () => {
    const target: ProviderTarget = {
      provider: "azure-openai",
      apiKey: "azure-key-1",
      customHost: mock.url,
      azure: { deploymentId: "gpt4o-batch", apiVersion: "v1" },
    };
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "v", body: chat("hello", "gpt-4o") }]);
    const submitted = await openAIBatches.submit(submission, contextOf(target));
    const created = mock.batches.get(submitted.providerBatchId)!;
    expect(JSON.parse(mock.fileText(created.input_file_id)).url).toBe("/v1/chat/completions");
    const done = await runToEnd(submitted.providerBatchId, submitted.state, target);
    expect(done.status).toBe("completed");
  });

  it("a deployment Azure does not know fails the batch with the provider's error", async () => {
    const target: ProviderTarget = { provider: "azure-openai", apiKey: "azure-key-1", customHost: mock.url };
    const submission = submissionOf("/v1/chat/completions", [{ custom_id: "x", body: chat("hi", "gpt-4o") }]);
    const submitted = await openAIBatches.submit(submission, contextOf(target));
    const done = await runToEnd(submitted.providerBatchId, submitted.state, target);
    expect(done.status).toBe("failed");
    expect(done.errors?.[0]).toMatchObject({ code: "model_not_found", param: "model", line: null });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bedrockBatches, recordIdOf } from "../../../../core/features/batches/native/bedrock.ts";
import { nativeBatchApiFor } from "../../../../core/features/batches/native/registry.ts";
import type { NativeBatchState } from "../../../../core/features/batches/types.ts";
import type { ProviderTarget } from "../../../../core/providers/types.ts";
import { type BedrockBatchesMock, startBedrockBatchesMock } from "../../../mocks/bedrock-batches.ts";
import { collect, contextOf, submissionOf } from "./native-submission.ts";

const MODEL = "anthropic.claude-3-haiku-20240307-v1:0";
const chat = (text: string, extra: Record<string, unknown> = {}) => ({
  model: MODEL,
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content: text },
  ],
  ...extra,
});
const aws = {
  accessKeyId: "AKIDEXAMPLE",
  secretAccessKey: "secret",
  region: "us-east-1",
  s3Bucket: "gateway-batches-test",
  roleArn: "arn:aws:iam::123456789012:role/BedrockBatch",
};

describe("bedrock native batches", () => {
  let mock: BedrockBatchesMock;
  beforeAll(async () => {
    mock = await startBedrockBatchesMock({ pollsToEnd: 2 });
  });
  afterAll(() => mock.close());

  const target = (extra: Partial<ProviderTarget> = {}): ProviderTarget => ({
    provider: "bedrock",
    customHost: mock.url,
    aws,
    ...extra,
  });
  const ctx = () => contextOf(target());

  it("is registered and supports chat and messages when the target names a bucket and a role", async () => {
    const api = await nativeBatchApiFor("bedrock");
    expect(api).toBe(bedrockBatches);
    expect(api!.supports(target(), "/v1/chat/completions")).toBe(true);
    expect(api!.supports(target(), "/v1/messages")).toBe(true);
    expect(api!.supports(target(), "/v1/embeddings")).toBe(false);
    expect(api!.supports(target({ aws: { ...aws, s3Bucket: undefined } }), "/v1/chat/completions")).toBe(false);
    expect(api!.supports(target({ aws: { ...aws, roleArn: undefined } }), "/v1/chat/completions")).toBe(false);
    expect(api!.supports({ provider: "anthropic" }, "/v1/chat/completions")).toBe(false);
  });

  it("uploads the records, creates a job, polls it to the end and answers chat completions", async () => {
    const submission = submissionOf(
      "/v1/chat/completions",
      [
        { custom_id: "req one/with spaces", body: chat("first") },
        { custom_id: "req-2", body: chat("second", { max_tokens: 50, stream: true }) },
        { custom_id: "req-3", body: chat("fail") },
        { custom_id: "req-4", body: chat("many", { n: 2 }) },
      ],
      { batchId: "batch_unit_1" },
    );
    const submitted = await bedrockBatches.submit(submission, ctx());
    expect(submitted.providerBatchId).toMatch(/^arn:aws:bedrock:us-east-1:\d+:model-invocation-job\/mockjob\d+$/);
    expect(submitted.state.status).toBe("in_progress");
    expect(submitted.state.request_counts).toEqual({ total: 3, completed: 0, failed: 0 });

    // The input object: InvokeModel Messages bodies keyed by short alphanumeric record ids.
    const input = mock.objects
      .get("gateway-batches-test/gateway-batches/batch_unit_1/input.jsonl")!
      .toString()
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(input.map((line) => line.recordId)).toEqual([recordIdOf(1), recordIdOf(2), recordIdOf(3)]);
    expect(recordIdOf(1)).toMatch(/^[a-zA-Z0-9]{11}$/);
    expect(input[0].modelInput).toEqual({
      anthropic_version: "bedrock-2023-05-31",
      system: "Be brief.",
      messages: [{ role: "user", content: "first" }],
      max_tokens: 4096,
    });
    expect(input[1].modelInput.max_tokens).toBe(50);
    expect("stream" in input[1].modelInput).toBe(false);

    const job = mock.jobs.get(submitted.providerBatchId)!;
    expect(job.body).toMatchObject({
      jobName: "gateway-batch-unit-1",
      roleArn: aws.roleArn,
      modelId: MODEL,
      inputDataConfig: {
        s3InputDataConfig: {
          s3Uri: "s3://gateway-batches-test/gateway-batches/batch_unit_1/input.jsonl",
          s3InputFormat: "JSONL",
        },
      },
      outputDataConfig: {
        s3OutputDataConfig: { s3Uri: "s3://gateway-batches-test/gateway-batches/batch_unit_1/output/" },
      },
      timeoutDurationInHours: 24,
    });
    const create = mock.requests.find((request) => request.path === "/model-invocation-job")!;
    expect(create.headers.authorization).toMatch(/\/us-east-1\/bedrock\/aws4_request/);
    const put = mock.requests.find((request) => request.method === "PUT")!;
    expect(put.headers.authorization).toMatch(/\/us-east-1\/s3\/aws4_request/);
    expect(put.headers["x-amz-content-sha256"]).toBe("UNSIGNED-PAYLOAD");
    // Credentials never travel in the records the engine keeps.
    expect(JSON.stringify(submitted.state)).not.toContain("secret");

    let state: NativeBatchState = submitted.state;
    state = await bedrockBatches.poll(submitted.providerBatchId, state, ctx());
    expect(state.status).toBe("in_progress");
    state = await bedrockBatches.poll(submitted.providerBatchId, state, ctx());
    expect(state.status).toBe("completed");

    const results = await collect(bedrockBatches.results(submitted.providerBatchId, state, ctx()));
    const byId = new Map(results.map((line) => [line.custom_id, line]));
    expect([...byId.keys()].sort()).toEqual(["req one/with spaces", "req-2", "req-3", "req-4"]);
    const first = byId.get("req one/with spaces")!;
    expect(first.error).toBeNull();
    expect(first.id).toMatch(/^batch_req_/);
    expect(first.response).toMatchObject({
      status_code: 200,
      body: {
        object: "chat.completion",
        choices: [{ message: { role: "assistant", content: "You said: first" }, finish_reason: "stop" }],
        usage: { prompt_tokens: 12 },
      },
    });
    expect(byId.get("req-3")!.response).toMatchObject({
      status_code: 400,
      body: { error: { message: "bad request", type: "invalid_request_error" } },
    });
    // Refused by the transform before submission (n > 1): an error answer, never sent.
    expect(byId.get("req-4")!.response).toMatchObject({ status_code: 400, body: { error: { param: null } } });
    const again = await collect(bedrockBatches.results(submitted.providerBatchId, state, ctx()));
    expect(again.map((line) => line.id).sort()).toEqual(results.map((line) => line.id).sort());
  });

  it("sends /v1/messages lines as they are and answers messages", async () => {
    const params = { model: MODEL, max_tokens: 64, messages: [{ role: "user", content: "hello" }] };
    const submission = submissionOf("/v1/messages", [{ custom_id: "m1", body: params }], { batchId: "batch_unit_2" });
    const { providerBatchId, state } = await bedrockBatches.submit(submission, ctx());
    let current = state;
    while (current.status === "in_progress") current = await bedrockBatches.poll(providerBatchId, current, ctx());
    const [line] = await collect(bedrockBatches.results(providerBatchId, current, ctx()));
    expect(line!.response?.body).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "You said: hello" }],
    });
  });

  it("refuses models other than Claude and lines naming different models", async () => {
    await expect(
      bedrockBatches.submit(
        submissionOf("/v1/chat/completions", [
          { custom_id: "a", body: { ...chat("x"), model: "amazon.nova-lite-v1:0" } },
        ]),
        ctx(),
      ),
    ).rejects.toMatchObject({ status: 400, code: "unsupported_model" });
    await expect(
      bedrockBatches.submit(
        submissionOf("/v1/chat/completions", [
          { custom_id: "a", body: chat("x") },
          { custom_id: "b", body: { ...chat("y"), model: "anthropic.claude-3-5-sonnet-20240620-v1:0" } },
        ]),
        ctx(),
      ),
    ).rejects.toMatchObject({ status: 400, code: "mixed_models" });
  });

  it("rejects a bucket that could move the request to another host", async () => {
    const bad = contextOf(target({ aws: { ...aws, s3Bucket: "evil.com:80/x" } }));
    await expect(
      bedrockBatches.submit(submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }]), bad),
    ).rejects.toMatchObject({ status: 400, code: "invalid_s3_bucket" });
  });

  it("maps a failed job and stops a running one", async () => {
    mock.options.minRecords = 5;
    try {
      const { providerBatchId, state } = await bedrockBatches.submit(
        submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }], { batchId: "batch_unit_3" }),
        ctx(),
      );
      const failed = await bedrockBatches.poll(providerBatchId, state, ctx());
      expect(failed.status).toBe("failed");
      expect(failed.errors?.[0]).toMatchObject({ code: "provider_error", message: "too few records" });
    } finally {
      mock.options.minRecords = 1;
    }
    const { providerBatchId, state } = await bedrockBatches.submit(
      submissionOf("/v1/chat/completions", [{ custom_id: "a", body: chat("x") }], { batchId: "batch_unit_4" }),
      ctx(),
    );
    await bedrockBatches.cancel(providerBatchId, state, ctx());
    const stopped = await bedrockBatches.poll(providerBatchId, state, ctx());
    expect(stopped.status).toBe("cancelled");
    // Stopped before it wrote output: no lines (the engine reports them missing).
    expect(await collect(bedrockBatches.results(providerBatchId, stopped, ctx()))).toEqual([]);
  });
});

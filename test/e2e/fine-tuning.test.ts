import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { resourceOwnerOf } from "../../core/auth/resource-owner.ts";
import { fineTuningTask } from "../../core/features/fine-tuning/scheduled-task.ts";
import { fileStoreOf } from "../../core/features/files/file-store.ts";
import { SCHEDULED_TASKS } from "../../core/routes/scheduled-tasks.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type OpenAIBatchesMock, startOpenAIBatchesMock } from "../mocks/openai-batches.ts";
import { type FineTuningMockState, fineTuningRoute, fineTuningState } from "../mocks/openai-fine-tuning.ts";
import { type BedrockBatchesMock, startBedrockBatchesMock } from "../mocks/bedrock-batches.ts";
import { startVertexBatchesMock, type VertexBatchesMock } from "../mocks/vertex-batches.ts";

/**
 * Fine-tuning end to end with the openai SDK (`fineTuning.jobs.*`) through the in-process gateway, against the mock
 * OpenAI (and Azure OpenAI) fine-tuning API: the job is created at the provider with the provider's copies of the
 * workspace's files, shown with the gateway's ids, refreshed by the scheduled task, and private to its workspace.
 */

const TRAINING = [
  {
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content: "Hello!" },
    ],
  },
  {
    messages: [
      { role: "user", content: "Bye" },
      { role: "assistant", content: "Goodbye!" },
    ],
  },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

let gateway: TestGateway;
let openai: OpenAIBatchesMock;
let openaiJobs: FineTuningMockState;
let azure: OpenAIBatchesMock;
let azureJobs: FineTuningMockState;
let vertex: VertexBatchesMock;
let bedrock: BedrockBatchesMock;
let keyA: string;
let keyB: string;
let ownerA: { organisationId: string; workspaceId: string };

function clientFor(key: string, headers: Record<string, string>): OpenAI {
  return new OpenAI({
    apiKey: "sk-provider-ft",
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": key, ...headers },
    maxRetries: 0,
  });
}

const openaiHeaders = () => ({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` });

async function seedFile(owner: typeof ownerA, purpose: "fine-tune" | "batch", text = TRAINING) {
  const stored = await fileStoreOf(gateway.gateway.services).create(owner, {
    filename: "train.jsonl",
    purpose,
    contentType: "application/jsonl",
    body: text,
  });
  return stored.file.id;
}

async function tick(): Promise<void> {
  await fineTuningTask.run(gateway.gateway.services, new AbortController().signal);
}

beforeAll(async () => {
  openaiJobs = fineTuningState(3);
  openai = await startOpenAIBatchesMock({ apiKey: "sk-provider-ft", extraRoutes: [fineTuningRoute(openaiJobs)] });
  azureJobs = fineTuningState(3);
  azure = await startOpenAIBatchesMock({
    apiKey: "azure-ft-key",
    azure: true,
    extraRoutes: [fineTuningRoute(azureJobs)],
  });
  vertex = await startVertexBatchesMock({ pollsToEnd: 2 });
  bedrock = await startBedrockBatchesMock({ pollsToEnd: 2 });
  gateway = await startTestGateway();
  const [wsA, wsB] = [await seedWorkspace(gateway, "ft-a"), await seedWorkspace(gateway, "ft-b")];
  keyA = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "a",
      workspace_id: wsA.id,
      scopes: ["*"],
    })
  ).key;
  keyB = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "b",
      workspace_id: wsB.id,
      scopes: ["*"],
    })
  ).key;
  ownerA = resourceOwnerOf({ organisationId: gateway.gateway.bootstrap.organisationId, workspaceId: wsA.id });
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await azure?.close();
  await vertex?.close();
  await bedrock?.close();
});

describe("fine-tuning jobs", () => {
  it("the fine-tuning task is registered", () => {
    expect(SCHEDULED_TASKS.map((task) => task.name)).toContain("fine-tuning");
  });

  it("creates, lists, retrieves, lists events and checkpoints, and the scheduled refresh finishes the job", async () => {
    const client = clientFor(keyA, openaiHeaders());
    // No maintained source publishes training prices: the organisation saves one (USD per million trained tokens).
    const pricing = await call(gateway, gateway.adminKey, "POST", "/v1/model-pricing", {
      provider: "openai",
      model: "gpt-4o-mini-2024-07-18",
      prices: { training: 3 },
    });
    expect(pricing.status).toBe(201);
    const trainingId = await seedFile(ownerA, "fine-tune");
    const validationId = await seedFile(ownerA, "fine-tune");
    const job = await client.fineTuning.jobs.create({
      model: "gpt-4o-mini-2024-07-18",
      training_file: trainingId,
      validation_file: validationId,
      suffix: "support-bot",
      hyperparameters: { n_epochs: 3, batch_size: "auto", learning_rate_multiplier: 0.5 },
      seed: 7,
      integrations: [{ type: "wandb", wandb: { project: "ft-tests", tags: ["e2e"] } }],
      metadata: { team: "support" },
    });
    expect(job).toMatchObject({
      object: "fine_tuning.job",
      model: "gpt-4o-mini-2024-07-18",
      status: "validating_files",
      training_file: trainingId,
      validation_file: validationId,
      user_provided_suffix: "support-bot",
      seed: 7,
      integrations: [{ type: "wandb", wandb: { project: "ft-tests", tags: ["e2e"] } }],
      metadata: { team: "support" },
      fine_tuned_model: null,
      result_files: [],
      organization_id: gateway.gateway.bootstrap.organisationId,
    });
    expect(job.id).toMatch(/^ftjob-/);
    // The provider got its own copies of the files, never the gateway's ids.
    const sent = openaiJobs.created.at(-1)!;
    expect(sent.training_file).toMatch(/^file-mock/);
    expect(sent.validation_file).toMatch(/^file-mock/);
    expect(openai.files.files.get(sent.training_file)!.content.toString()).toBe(TRAINING);
    expect(sent).toMatchObject({ suffix: "support-bot", seed: 7, hyperparameters: { n_epochs: 3 } });
    const providerJobId = [...openaiJobs.jobs.keys()].at(-1)!;
    expect(job.id).not.toBe(providerJobId);

    const list = await client.fineTuning.jobs.list({ limit: 10 });
    expect(list.data.map((item) => item.id)).toContain(job.id);
    const filtered = await client.fineTuning.jobs.list({ metadata: { team: "nobody" } } as any);
    expect(filtered.data).toEqual([]);
    const matching = await client.fineTuning.jobs.list({ metadata: { team: "support" } } as any);
    expect(matching.data.map((item) => item.id)).toEqual([job.id]);

    // A read refreshes an unfinished job from the provider: queued.
    const read = await client.fineTuning.jobs.retrieve(job.id);
    expect(read.status).toBe("queued");

    // The scheduled task takes it further without anyone reading it (a list does not refresh): running (a
    // checkpoint appears), then succeeded.
    const listed = async () => (await client.fineTuning.jobs.list()).data.find((item) => item.id === job.id)!;
    await tick();
    expect((await listed()).status).toBe("running");
    await tick();
    expect(await listed()).toMatchObject({ status: "succeeded", estimated_finish: null });
    const stored = await client.fineTuning.jobs.retrieve(job.id);
    expect(stored.fine_tuned_model).toMatch(/^ft:gpt-4o-mini-2024-07-18:mock-org:support-bot:/);
    expect(stored.finished_at).toEqual(expect.any(Number));
    expect(stored.trained_tokens).toBe(5000);
    // Its training is logged once, priced: trained tokens x the training price.
    const logs = await call(gateway, gateway.adminKey, "GET", "/v1/logs?limit=100&metadata_key=fine_tuning_job_id");
    const trainingLogs = logs.body.data.filter((log: any) => log.metadata.fine_tuning_job_id === job.id);
    expect(trainingLogs).toHaveLength(1);
    expect(trainingLogs[0]).toMatchObject({ provider: "openai", priced: true, usage: { promptTokens: 5000 } });
    expect(trainingLogs[0].cost).toBeCloseTo((5000 * 3) / 1_000_000, 12);
    // The result file is the workspace's own file now.
    expect(stored.result_files).toHaveLength(1);
    const resultId = stored.result_files[0]!;
    expect(resultId).toMatch(/^file-ftjob-/);
    const result = await fileStoreOf(gateway.gateway.services).content(ownerA, resultId);
    expect(result!.file.file.purpose).toBe("fine-tune-results");
    expect(await new Response(result!.body).text()).toContain("train_loss");

    const events = await client.fineTuning.jobs.listEvents(job.id, { limit: 2 });
    expect(events.data).toHaveLength(2);
    expect(events.data[0]).toMatchObject({
      object: "fine_tuning.job.event",
      message: "The job has successfully completed",
    });
    expect(events.has_more).toBe(true);
    const checkpoints = await client.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data).toHaveLength(1);
    expect(checkpoints.data[0]).toMatchObject({
      object: "fine_tuning.job.checkpoint",
      fine_tuning_job_id: job.id,
      step_number: 10,
    });

    // A finished job is not refreshed again, and cannot be cancelled.
    const polls = openaiJobs.jobs.get(providerJobId)!.polls;
    await client.fineTuning.jobs.retrieve(job.id);
    await tick();
    expect(openaiJobs.jobs.get(providerJobId)!.polls).toBe(polls);
    await expect(client.fineTuning.jobs.cancel(job.id)).rejects.toMatchObject({ status: 400 });
  });

  it("cancels a running job at the provider", async () => {
    const client = clientFor(keyA, openaiHeaders());
    const job = await client.fineTuning.jobs.create({
      model: "gpt-4o-mini",
      training_file: await seedFile(ownerA, "fine-tune"),
    });
    const cancelled = await client.fineTuning.jobs.cancel(job.id);
    expect(cancelled).toMatchObject({ id: job.id, status: "cancelled" });
    expect([...openaiJobs.jobs.values()].at(-1)!.job.status).toBe("cancelled");
    expect((await client.fineTuning.jobs.retrieve(job.id)).status).toBe("cancelled");
  });

  it("a job the provider fails shows its error", async () => {
    const client = clientFor(keyA, openaiHeaders());
    const job = await client.fineTuning.jobs.create({
      model: "fail-model",
      training_file: await seedFile(ownerA, "fine-tune"),
    });
    await tick();
    await tick();
    await tick();
    const failed = await client.fineTuning.jobs.retrieve(job.id);
    expect(failed).toMatchObject({
      status: "failed",
      error: { code: "invalid_training_file", param: "training_file" },
    });
  });

  it("another workspace gets 404 for every route of the job, and does not see it listed", async () => {
    const a = clientFor(keyA, openaiHeaders());
    const b = clientFor(keyB, openaiHeaders());
    const job = await a.fineTuning.jobs.create({
      model: "gpt-4o-mini",
      training_file: await seedFile(ownerA, "fine-tune"),
    });
    await expect(b.fineTuning.jobs.retrieve(job.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.fineTuning.jobs.cancel(job.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.fineTuning.jobs.listEvents(job.id)).rejects.toMatchObject({ status: 404 });
    await expect(b.fineTuning.jobs.checkpoints.list(job.id)).rejects.toMatchObject({ status: 404 });
    expect((await b.fineTuning.jobs.list()).data).toEqual([]);
    // Nor can it train on A's file.
    const training = await seedFile(ownerA, "fine-tune");
    await expect(b.fineTuning.jobs.create({ model: "gpt-4o-mini", training_file: training })).rejects.toMatchObject({
      status: 400,
      error: { param: "training_file" },
    });
    expect((await a.fineTuning.jobs.retrieve(job.id)).id).toBe(job.id);
  });

  it("answers 400s naming the param", async () => {
    const client = clientFor(keyA, openaiHeaders());
    const training = await seedFile(ownerA, "fine-tune");
    const wandb = { type: "wandb" as const, wandb: { project: "p" } };
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ training_file: training }, "model"],
      [{ model: "gpt-4o-mini", training_file: training, integrations: Array(6).fill(wandb) }, "integrations"],
      [
        { model: "gpt-4o-mini", training_file: training, integrations: [{ type: "wandb", wandb: {} }] },
        "integrations[0].wandb.project",
      ],
      [{ model: "gpt-4o-mini", training_file: training, hyperparameters: { n_epochs: 0 } }, "hyperparameters.n_epochs"],
      [
        { model: "gpt-4o-mini", training_file: training, hyperparameters: { batch_size: "big" } },
        "hyperparameters.batch_size",
      ],
      [
        { model: "gpt-4o-mini", training_file: training, hyperparameters: { learning_rate_multiplier: -1 } },
        "hyperparameters.learning_rate_multiplier",
      ],
      [{ model: "gpt-4o-mini", training_file: training, suffix: "x".repeat(65) }, "suffix"],
      [{ model: "gpt-4o-mini", training_file: "file-unknown123" }, "training_file"],
      [{ model: "gpt-4o-mini", training_file: await seedFile(ownerA, "batch") }, "training_file"],
      [{ model: "gpt-4o-mini", training_file: training, validation_file: "file-nope" }, "validation_file"],
      [{ model: "gpt-4o-mini", training_file: training, metadata: { k: "v".repeat(513) } }, "metadata.k"],
    ];
    const before = openaiJobs.created.length;
    for (const [body, param] of cases) {
      const error = await client.fineTuning.jobs.create(body as any).catch((e) => e);
      expect(error?.status, param).toBe(400);
      expect(error?.error?.param, JSON.stringify(error?.error)).toBe(param);
    }
    expect(openaiJobs.created.length).toBe(before);
    const limit = await fetch(`${gateway.url}/v1/fine_tuning/jobs?limit=101`, {
      headers: { "x-gateway-api-key": keyA },
    });
    expect(limit.status).toBe(400);
    expect((await limit.json()).error.param).toBe("limit");
    // A provider without a fine-tuning API through the gateway.
    const anthropic = clientFor(keyA, { "x-gateway-provider": "anthropic" });
    await expect(anthropic.fineTuning.jobs.create({ model: "claude", training_file: training })).rejects.toMatchObject({
      status: 400,
      error: { code: "unsupported_provider" },
    });
    // No provider at all.
    const none = clientFor(keyA, {});
    await expect(none.fineTuning.jobs.create({ model: "m", training_file: training })).rejects.toMatchObject({
      status: 400,
    });
  });

  it("runs on Azure OpenAI through its fine-tuning API", async () => {
    const client = clientFor(keyA, {
      "x-gateway-provider": "azure-openai",
      "x-gateway-custom-host": azure.url,
      "x-gateway-azure-api-version": "2024-10-21",
    });
    const clientWithKey = new OpenAI({
      apiKey: "azure-ft-key",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": keyA, ...(client as any)._options.defaultHeaders },
      maxRetries: 0,
    });
    const job = await clientWithKey.fineTuning.jobs.create({
      model: "gpt-4o-mini-2024-07-18",
      training_file: await seedFile(ownerA, "fine-tune"),
    });
    expect(job.status).toBe("validating_files");
    const create = azure.requests.find(
      (request) => request.method === "POST" && request.path.startsWith("/openai/fine_tuning/jobs"),
    )!;
    expect(create.path).toContain("api-version=2024-10-21");
    expect(create.headers["api-key"]).toBe("azure-ft-key");
    await tick();
    await tick();
    await tick();
    const done = await clientWithKey.fineTuning.jobs.retrieve(job.id);
    expect(done.status).toBe("succeeded");
    expect(done.result_files).toHaveLength(1);
    const checkpoints = await clientWithKey.fineTuning.jobs.checkpoints.list(job.id);
    expect(checkpoints.data[0]!.fine_tuning_job_id).toBe(job.id);
  });
});

describe("fine-tuning on Vertex AI", () => {
  const vertexHeaders = () => ({
    "x-gateway-provider": "vertex-ai",
    "x-gateway-custom-host": vertex.url,
    "x-gateway-vertex-project-id": "ft-project",
    "x-gateway-vertex-region": "us-central1",
    "x-gateway-vertex-storage-bucket": "ft-bucket",
  });
  const vertexClient = () =>
    new OpenAI({
      apiKey: vertex.accessToken,
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": keyA, ...vertexHeaders() },
      maxRetries: 0,
    });

  it("uploads the chat lines as Gemini examples, creates a tuning job, and the scheduled refresh finishes it", async () => {
    const client = vertexClient();
    const job = await client.fineTuning.jobs.create({
      model: "gemini-2.0-flash-001",
      training_file: await seedFile(ownerA, "fine-tune"),
      validation_file: await seedFile(ownerA, "fine-tune"),
      suffix: "support",
      hyperparameters: { n_epochs: 4, learning_rate_multiplier: 0.5 },
    });
    expect(job).toMatchObject({ status: "validating_files", model: "gemini-2.0-flash-001", fine_tuned_model: null });
    const [providerJobId, tuning] = [...vertex.tuningJobs].at(-1)!;
    expect(tuning.body).toEqual({
      baseModel: "gemini-2.0-flash-001",
      supervisedTuningSpec: {
        trainingDatasetUri: `gs://ft-bucket/gateway-fine-tuning/${job.id}/train.jsonl`,
        validationDatasetUri: `gs://ft-bucket/gateway-fine-tuning/${job.id}/validation.jsonl`,
        hyperParameters: { epochCount: 4, learningRateMultiplier: 0.5 },
      },
      tunedModelDisplayName: "gemini-2.0-flash-001-support",
    });
    const uploaded = vertex.objects.get(`ft-bucket/gateway-fine-tuning/${job.id}/train.jsonl`)!.toString("utf8");
    expect(
      uploaded
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))[0],
    ).toEqual({
      contents: [
        { role: "user", parts: [{ text: "Hi" }] },
        { role: "model", parts: [{ text: "Hello!" }] },
      ],
    });

    await tick();
    expect((await client.fineTuning.jobs.list()).data.find((item) => item.id === job.id)!.status).toBe("running");
    await tick();
    const done = await client.fineTuning.jobs.retrieve(job.id);
    expect(done).toMatchObject({
      status: "succeeded",
      fine_tuned_model: `projects/ft-project/locations/us-central1/models/77${providerJobId}@1`,
      trained_tokens: 1234,
      result_files: [],
    });
    expect(done.finished_at).toEqual(expect.any(Number));
    expect((await client.fineTuning.jobs.listEvents(job.id)).data).toEqual([]);
    expect((await client.fineTuning.jobs.checkpoints.list(job.id)).data).toEqual([]);
  });

  it("cancels a tuning job, and refuses what Vertex cannot do before uploading anything", async () => {
    const client = vertexClient();
    const job = await client.fineTuning.jobs.create({
      model: "gemini-2.0-flash-001",
      training_file: await seedFile(ownerA, "fine-tune"),
    });
    const cancelling = await client.fineTuning.jobs.cancel(job.id);
    expect(cancelling.status).not.toBe("succeeded");
    const [, tuning] = [...vertex.tuningJobs].at(-1)!;
    expect(tuning.state).toMatch(/JOB_STATE_CANCELL/);
    await tick();
    expect((await client.fineTuning.jobs.retrieve(job.id)).status).toBe("cancelled");

    const objects = vertex.objects.size;
    const notChat = await seedFile(ownerA, "fine-tune", JSON.stringify({ prompt: "x", completion: "y" }));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: "gemini-2.0-flash-001", training_file: notChat }, "training_file"],
      [
        { model: "gemini-2.0-flash-001", training_file: notChat, hyperparameters: { batch_size: 8 } },
        "hyperparameters.batch_size",
      ],
      [{ model: "claude-3-5-sonnet@20240620", training_file: notChat }, "model"],
    ];
    for (const [body, param] of cases) {
      const error = await client.fineTuning.jobs.create(body as any).catch((e) => e);
      expect(error?.status, param).toBe(400);
      expect(error?.error?.param, JSON.stringify(error?.error)).toBe(param);
    }
    expect(vertex.objects.size).toBe(objects);
    const noBucket = new OpenAI({
      apiKey: vertex.accessToken,
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": keyA, ...vertexHeaders(), "x-gateway-vertex-storage-bucket": "" },
      maxRetries: 0,
    });
    await expect(
      noBucket.fineTuning.jobs.create({ model: "gemini-2.0-flash-001", training_file: notChat }),
    ).rejects.toMatchObject({ status: 400 });
  });
});

describe("fine-tuning on Bedrock", () => {
  const bedrockHeaders = () => ({
    "x-gateway-provider": "bedrock",
    "x-gateway-custom-host": bedrock.url,
    "x-gateway-aws-access-key-id": "AKIDEXAMPLE",
    "x-gateway-aws-secret-access-key": "bedrock-ft-secret",
    "x-gateway-aws-region": "us-east-1",
    "x-gateway-aws-s3-bucket": "ft-bedrock-bucket",
    "x-gateway-aws-role-arn": "arn:aws:iam::123456789012:role/BedrockFineTuning",
  });
  const bedrockClient = (headers: Record<string, string> = {}) =>
    new OpenAI({
      apiKey: "unused",
      baseURL: `${gateway.url}/v1`,
      defaultHeaders: { "x-gateway-api-key": keyA, ...bedrockHeaders(), ...headers },
      maxRetries: 0,
    });
  const CLAUDE = "anthropic.claude-3-haiku-20240307-v1:0:200k";

  it("uploads the chat lines as Claude examples, creates a customisation job, and the scheduled refresh finishes it", async () => {
    const client = bedrockClient();
    const job = await client.fineTuning.jobs.create({
      model: CLAUDE,
      training_file: await seedFile(ownerA, "fine-tune"),
      validation_file: await seedFile(ownerA, "fine-tune"),
      suffix: "support",
      hyperparameters: { n_epochs: 4, batch_size: 8, learning_rate_multiplier: 0.5 },
    });
    expect(job).toMatchObject({ status: "validating_files", model: CLAUDE, fine_tuned_model: null });
    const [jobArn, created] = [...bedrock.customizationJobs].at(-1)!;
    const folder = `s3://ft-bedrock-bucket/gateway-fine-tuning/${job.id}`;
    expect(created.body).toEqual({
      jobName: `gateway-${job.id}`,
      customModelName: "anthropic-claude-3-haiku-20240307-v1-support",
      roleArn: "arn:aws:iam::123456789012:role/BedrockFineTuning",
      baseModelIdentifier: CLAUDE,
      customizationType: "FINE_TUNING",
      trainingDataConfig: { s3Uri: `${folder}/train.jsonl` },
      validationDataConfig: { validators: [{ s3Uri: `${folder}/validation.jsonl` }] },
      outputDataConfig: { s3Uri: `${folder}/output/` },
      hyperParameters: { epochCount: "4", batchSize: "8", learningRateMultiplier: "0.5" },
      clientRequestToken: job.id.replace(/[^a-zA-Z0-9]/g, ""),
    });
    const uploaded = bedrock.objects.get(`ft-bedrock-bucket/gateway-fine-tuning/${job.id}/train.jsonl`)!;
    expect(JSON.parse(uploaded.toString("utf8").split("\n")[0]!)).toEqual({
      messages: [
        { role: "user", content: "Hi" },
        { role: "assistant", content: "Hello!" },
      ],
    });

    await tick();
    expect((await client.fineTuning.jobs.list()).data.find((item) => item.id === job.id)!.status).toBe("running");
    await tick();
    const done = await client.fineTuning.jobs.retrieve(job.id);
    expect(done).toMatchObject({
      status: "succeeded",
      fine_tuned_model: `arn:aws:bedrock:us-east-1:123456789012:custom-model/${CLAUDE}/${jobArn.split("/").pop()}`,
      result_files: [],
      hyperparameters: { n_epochs: 4, batch_size: 8, learning_rate_multiplier: 0.5 },
    });
    expect(done.finished_at).toEqual(expect.any(Number));
    expect((await client.fineTuning.jobs.listEvents(job.id)).data).toEqual([]);
    expect((await client.fineTuning.jobs.checkpoints.list(job.id)).data).toEqual([]);
    // Another workspace never sees it.
    await expect(bedrockClient({ "x-gateway-api-key": keyB }).fineTuning.jobs.retrieve(job.id)).rejects.toMatchObject({
      status: 404,
    });
  });

  it("writes Nova's conversation format, cancels a job, and refuses what Bedrock cannot do before uploading", async () => {
    const client = bedrockClient();
    const job = await client.fineTuning.jobs.create({
      model: "amazon.nova-micro-v1:0:128k",
      training_file: await seedFile(ownerA, "fine-tune"),
      hyperparameters: { learning_rate_multiplier: 2 },
    });
    const [, created] = [...bedrock.customizationJobs].at(-1)!;
    expect(created.status).toBe("InProgress");
    expect(created.body.hyperParameters).toEqual({ learningRate: "0.00002" });
    expect(created.body.customModelName).toBe(job.id.replace(/[^a-zA-Z0-9]+/g, "-"));
    const uploaded = bedrock.objects.get(`ft-bedrock-bucket/gateway-fine-tuning/${job.id}/train.jsonl`)!;
    expect(JSON.parse(uploaded.toString("utf8").split("\n")[1]!)).toEqual({
      schemaVersion: "bedrock-conversation-2024",
      messages: [
        { role: "user", content: [{ text: "Bye" }] },
        { role: "assistant", content: [{ text: "Goodbye!" }] },
      ],
    });
    const cancelling = await client.fineTuning.jobs.cancel(job.id);
    // The stop is followed by a read: the mock's job is Stopping, then Stopped on that read.
    expect(cancelling.status).toBe("cancelled");
    expect(created.status).toBe("Stopped");
    await tick();
    expect((await client.fineTuning.jobs.retrieve(job.id)).status).toBe("cancelled");

    const objects = bedrock.objects.size;
    const training = await seedFile(ownerA, "fine-tune");
    const notChat = await seedFile(ownerA, "fine-tune", JSON.stringify({ prompt: "x", completion: "y" }));
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ model: "amazon.titan-text-express-v1:0:8k", training_file: training }, "model"],
      [{ model: "meta.llama3-1-8b-instruct-v1:0:128k", training_file: training }, "model"],
      [{ model: CLAUDE, training_file: notChat }, "training_file"],
      [{ model: CLAUDE, training_file: training, validation_file: notChat }, "validation_file"],
      [{ model: CLAUDE, training_file: training, seed: 1 }, "seed"],
      [{ model: CLAUDE, training_file: training, hyperparameters: { n_epochs: 11 } }, "hyperparameters.n_epochs"],
      [
        { model: "amazon.nova-lite-v1:0:300k", training_file: training, hyperparameters: { batch_size: 8 } },
        "hyperparameters.batch_size",
      ],
      [{ model: CLAUDE, training_file: training, method: { type: "dpo" } }, "method"],
    ];
    for (const [body, param] of cases) {
      const error = await client.fineTuning.jobs.create(body as any).catch((e) => e);
      expect(error?.status, param).toBe(400);
      expect(error?.error?.param, JSON.stringify(error?.error)).toBe(param);
    }
    const noRole = await bedrockClient({ "x-gateway-aws-role-arn": "" })
      .fineTuning.jobs.create({ model: CLAUDE, training_file: training })
      .catch((e) => e);
    expect(noRole?.status).toBe(400);
    expect(bedrock.objects.size).toBe(objects);
  });
});

import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type AwsGateway, startAwsGateway } from "../helpers/aws-gateway.ts";
import { createKey } from "../helpers/control.ts";
import { type OpenAIBatchesMock, startOpenAIBatchesMock } from "../mocks/openai-batches.ts";
import { type FineTuningMockState, fineTuningRoute, fineTuningState } from "../mocks/openai-fine-tuning.ts";

/**
 * The AWS store family end to end (DynamoDB, S3 and SQS emulators; queue work delivered through the Lambda SQS
 * handler, scheduled work through the scheduled Lambda's handler): the openai SDK's files, batches (the provider's
 * native batch API) and fineTuning.jobs methods, as on the local stores. Gateway-run batches on these stores are in
 * batches-delivery.test.ts.
 */

let gateway: AwsGateway;
let provider: OpenAIBatchesMock;
let jobs: FineTuningMockState;
let workspaceKey: string;
let otherKey: string;

const TERMINAL = new Set(["completed", "failed", "expired", "cancelled"]);

const client = (key: string, provided = true) =>
  new OpenAI({
    apiKey: "sk-aws-family",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": key,
      ...(provided ? { "x-gateway-provider": "openai", "x-gateway-custom-host": `${provider.url}/v1` } : {}),
    },
  });

/** Runs queue deliveries and scheduled ticks until `done` holds. */
async function workUntil(done: () => Promise<boolean>): Promise<void> {
  for (let round = 0; round < 60; round++) {
    if (await done()) return;
    while ((await gateway.deliver()) > 0) {}
    await gateway.tick();
  }
  throw new Error("the work did not finish");
}

beforeAll(async () => {
  jobs = fineTuningState(2);
  provider = await startOpenAIBatchesMock({
    apiKey: "sk-aws-family",
    pollsToComplete: 1,
    extraRoutes: [fineTuningRoute(jobs)],
  });
  gateway = await startAwsGateway(inject("emulators"));
  const admin = { url: gateway.url, adminKey: gateway.adminKey } as never;
  const workspace = async (name: string) => {
    const answer = await fetch(`${gateway.url}/v1/admin/workspaces`, {
      method: "POST",
      headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
      body: JSON.stringify({ name }),
    });
    return ((await answer.json()) as { id: string }).id;
  };
  const [a, b] = [await workspace("aws-a"), await workspace("aws-b")];
  const key = async (workspaceId: string) =>
    (
      await createKey(admin, gateway.adminKey, "workspace", "service", {
        name: "k",
        workspace_id: workspaceId,
        scopes: ["*"],
      })
    ).key;
  workspaceKey = await key(a);
  otherKey = await key(b);
}, 60_000);

afterAll(async () => {
  await gateway?.close();
  await provider?.close();
});

describe("files, batches and fine-tuning on the AWS stores", () => {
  it("files: upload (copied to the provider named), list, retrieve, content, delete; private to the workspace", async () => {
    const sdk = client(workspaceKey);
    const text = '{"prompt": "a", "completion": "b"}\n'.repeat(100);
    const file = await sdk.files.create({
      file: await OpenAI.toFile(Buffer.from(text), "train.jsonl"),
      purpose: "fine-tune",
    });
    expect(file).toMatchObject({ object: "file", bytes: text.length, filename: "train.jsonl", purpose: "fine-tune" });
    expect([...provider.files.files.values()].some((copy) => copy.content.toString() === text)).toBe(true);
    await workUntil(async () => (await sdk.files.list()).data.some((listed) => listed.id === file.id));
    expect((await sdk.files.retrieve(file.id)).bytes).toBe(text.length);
    expect(await (await sdk.files.content(file.id)).text()).toBe(text);
    await expect(client(otherKey).files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
    await expect(client(otherKey).files.content(file.id)).rejects.toMatchObject({ status: 404 });
    expect((await sdk.files.delete(file.id)).deleted).toBe(true);
    await expect(sdk.files.retrieve(file.id)).rejects.toMatchObject({ status: 404 });
  });

  it("batches: the provider's batch API runs it; the output arrives in the workspace's files", async () => {
    const sdk = client(workspaceKey);
    const lines = Array.from({ length: 5 }, (_, index) => ({
      custom_id: `row-${index}`,
      method: "POST",
      url: "/v1/chat/completions",
      body: { model: "gpt-4o-mini", messages: [{ role: "user", content: `question ${index}` }] },
    }));
    const input = await sdk.files.create({
      file: await OpenAI.toFile(Buffer.from(`${lines.map((line) => JSON.stringify(line)).join("\n")}\n`), "in.jsonl"),
      purpose: "batch",
    });
    const created = await sdk.batches.create({
      input_file_id: input.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(created.status).toBe("validating");
    let batch = created;
    await workUntil(async () => {
      batch = await sdk.batches.retrieve(created.id);
      return TERMINAL.has(batch.status);
    });
    expect(batch).toMatchObject({ status: "completed", request_counts: { total: 5, completed: 5, failed: 0 } });
    expect(provider.batches.size).toBeGreaterThan(0);
    const output = (await (await sdk.files.content(batch.output_file_id!)).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(output.map((line) => line.custom_id).sort()).toEqual(lines.map((line) => line.custom_id).sort());
    for (const line of output) expect(line.response.status_code).toBe(200);
    await expect(client(otherKey).batches.retrieve(created.id)).rejects.toMatchObject({ status: 404 });
    expect((await client(otherKey).batches.list()).data.map((listed) => listed.id)).not.toContain(created.id);
  });

  it("fine-tuning: a job created at the provider is refreshed by the scheduled Lambda until it succeeds", async () => {
    const sdk = client(workspaceKey);
    const training = await sdk.files.create({
      file: await OpenAI.toFile(Buffer.from('{"messages": []}\n'), "train.jsonl"),
      purpose: "fine-tune",
    });
    const job = await sdk.fineTuning.jobs.create({ model: "gpt-4o-mini-2024-07-18", training_file: training.id });
    expect(job).toMatchObject({ object: "fine_tuning.job", training_file: training.id, fine_tuned_model: null });
    // The provider's job moves on only when polled, and only the scheduled Lambda polls it here.
    await workUntil(async () => [...jobs.jobs.values()].at(-1)?.job.status === "succeeded");
    await gateway.tick();
    const done = await sdk.fineTuning.jobs.retrieve(job.id);
    expect(done.status).toBe("succeeded");
    expect(done.fine_tuned_model).toEqual(expect.any(String));
    await expect(client(otherKey).fineTuning.jobs.retrieve(job.id)).rejects.toMatchObject({ status: 404 });
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { gatewayClient, jsonl, parseLines, runBatchToEnd, uploadJsonl } from "../helpers/batches.ts";
import { call, createKey, seedWorkspace } from "../helpers/control.ts";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type AnthropicBatchesMock, startAnthropicBatchesMock } from "../mocks/anthropic-batches.ts";
import { type OpenAIBatchesMock, startOpenAIBatchesMock } from "../mocks/openai-batches.ts";

/**
 * Provider-native batches end to end with the openai SDK: files.create -> batches.create (native is the default for
 * a single target whose provider has a batch API) -> the provider's batch polled by the sweep -> the output file
 * holds the provider's answers in OpenAI's shape, and each line is logged with its cost at the batch discount.
 * OpenAI, Anthropic (chat lines translated) and Azure OpenAI (a rewritten input with the deployment as model), each
 * against its mock batch API.
 */

let gateway: TestGateway;
let openai: OpenAIBatchesMock;
let azure: OpenAIBatchesMock;
let anthropic: AnthropicBatchesMock;
let workspaceKey: string;

const chatLine = (customId: string, content: string, model: string) => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user", content }] },
});

const sdk = (apiKey: string, headers: Record<string, string>) => gatewayClient(gateway, workspaceKey, headers, apiKey);
/** Uploads the input with the workspace key only (a provider named on the upload would get a copy right away). */
const upload = (lines: unknown[]) => uploadJsonl(gatewayClient(gateway, workspaceKey), jsonl(lines));

async function batchLogs(batchId: string): Promise<any[]> {
  const logs = (await call(gateway, workspaceKey, "GET", "/v1/logs?limit=100")).body.data as any[];
  return logs.filter((log) => log.metadata?.batch_id === batchId);
}

/**
 * Every line is logged; each output line's log costs the catalog price of its usage, halved (the provider's batch
 * discount).
 */
async function expectDiscountedCosts(provider: string, batchId: string, output: any[], total = output.length) {
  await expect.poll(async () => (await batchLogs(batchId)).length, { timeout: 5000 }).toBe(total);
  const logs = await batchLogs(batchId);
  for (const line of output) {
    const log = logs.find((entry) => entry.metadata.custom_id === line.custom_id);
    const body = line.response.body;
    const full = costOf(provider, body.model, body.usage);
    expect(full.priced).toBe(true);
    expect(log.cost).toBeCloseTo(full.total * 0.5, 12);
  }
}

beforeAll(async () => {
  openai = await startOpenAIBatchesMock({ apiKey: "sk-native-openai" });
  azure = await startOpenAIBatchesMock({ apiKey: "azure-native-key", azure: true, deployments: ["gpt-4o-mini"] });
  anthropic = await startAnthropicBatchesMock();
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  const workspace = await seedWorkspace(gateway, "Native batches");
  workspaceKey = (
    await createKey(gateway, gateway.adminKey, "workspace", "service", {
      name: "native",
      workspace_id: workspace.id,
      scopes: ["*"],
    })
  ).key;
});

afterAll(async () => {
  await gateway?.close();
  await openai?.close();
  await azure?.close();
  await anthropic?.close();
});

describe("native batches", () => {
  it("openai: the provider runs the batch; output in OpenAI's shape; costs at the batch discount", async () => {
    const client = sdk("sk-native-openai", {
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${openai.url}/v1`,
    });
    const fileId = await upload([
      chatLine("q-1", "first question", "gpt-4o-mini"),
      chatLine("q-2", "second question", "gpt-4o-mini"),
      chatLine("q-3", "third", "error-model"),
    ]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(created.status).toBe("validating");
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });
    // The provider ran it: one batch at the mock, over the gateway file's copy.
    expect(openai.batches.size).toBe(1);
    const [providerBatch] = openai.batches.values();
    expect(providerBatch!.metadata?.gateway_batch_id).toBe(created.id);

    const output = parseLines(await (await client.files.content(done.output_file_id!)).text());
    expect(output.map((line) => line.custom_id)).toEqual(["q-1", "q-2"]);
    expect(output[0]).toMatchObject({
      error: null,
      response: { status_code: 200, body: { choices: [{ message: { content: "Batch answer to: first question" } }] } },
    });
    const errors = parseLines(await (await client.files.content(done.error_file_id!)).text());
    expect(errors.map((line) => [line.custom_id, line.response.status_code])).toEqual([["q-3", 404]]);
    await expectDiscountedCosts("openai", created.id, output, 3);
  });

  it("anthropic: chat lines translated to Message Batches, answers back as chat completions", async () => {
    const client = sdk("sk-ant-native", {
      "x-gateway-provider": "anthropic",
      "x-gateway-custom-host": anthropic.url,
    });
    const model = "claude-3-5-haiku-20241022";
    const fileId = await upload([chatLine("a-1", "hello there", model), chatLine("a-2", "and again", model)]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const [providerBatch] = anthropic.batches.values();
    expect(providerBatch!.requests[0]!.params).toMatchObject({ model, max_tokens: 4096 });

    const output = parseLines(await (await client.files.content(done.output_file_id!)).text());
    expect(output.map((line) => line.custom_id)).toEqual(["a-1", "a-2"]);
    expect(output[0].response.body).toMatchObject({
      object: "chat.completion",
      model,
      choices: [{ message: { role: "assistant", content: "You said: hello there" }, finish_reason: "stop" }],
    });
    await expectDiscountedCosts("anthropic", created.id, output);
  });

  it("azure-openai: a rewritten input with the deployment as model, results back", async () => {
    const client = sdk("azure-native-key", {
      "x-gateway-provider": "azure-openai",
      "x-gateway-custom-host": azure.url,
      "x-gateway-azure-deployment-id": "gpt-4o-mini",
      "x-gateway-azure-api-version": "2024-10-21",
    });
    const fileId = await upload([chatLine("z-1", "bonjour", "any-name"), chatLine("z-2", "salut", "any-name")]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("completed");
    const [providerBatch] = azure.batches.values();
    const sent = parseLines(azure.fileText(providerBatch!.input_file_id));
    expect(sent.map((line) => [line.url, line.body.model])).toEqual([
      ["/chat/completions", "gpt-4o-mini"],
      ["/chat/completions", "gpt-4o-mini"],
    ]);
    const output = parseLines(await (await client.files.content(done.output_file_id!)).text());
    expect(output.map((line) => line.response.body.choices[0].message.content)).toEqual([
      "Batch answer to: bonjour",
      "Batch answer to: salut",
    ]);
    await expectDiscountedCosts("azure-openai", created.id, output);
  });

  it("cancel reaches the provider's batch", async () => {
    const client = sdk("sk-native-openai", {
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${openai.url}/v1`,
    });
    const fileId = await upload([chatLine("c-1", "slow", "gpt-4o-mini")]);
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await gateway.gateway.worker.drain();
    const providerBatch = [...openai.batches.values()].at(-1)!;
    expect(providerBatch.metadata?.gateway_batch_id).toBe(created.id);
    await client.batches.cancel(created.id);
    expect(providerBatch.status).toBe("cancelling");
    const done = await runBatchToEnd(gateway, client, created.id);
    expect(done.status).toBe("cancelled");
  });
});

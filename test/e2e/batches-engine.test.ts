import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { sweepBatches } from "../../core/features/batches/sweep.ts";
import type { BatchResultLine, NativeBatchApi, NativeBatchState } from "../../core/features/batches/types.ts";
import { consumeBatches } from "../../core/features/batches/worker.ts";
import { costOf } from "../../core/inference/catalog/cost.ts";
import { chatLine, fileText, jsonl, uploadJsonl } from "../helpers/batches.ts";
import { call } from "../helpers/control.ts";
import { echoChat } from "../helpers/echo-upstream.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/** A stand-in provider batch API for `openai` (the real adapters are tested on their own). */
const fake = vi.hoisted(() => ({
  polls: 0,
  cancelled: [] as string[],
  submitted: [] as Array<{ lines: string[]; provider: string }>,
}));

vi.mock("../../core/features/batches/native/registry.ts", () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 };
  const api: NativeBatchApi = {
    supports: (target) => target.provider === "openai",
    async submit(submission, ctx) {
      const lines: string[] = [];
      for await (const line of submission.lines()) lines.push(line.custom_id);
      fake.submitted.push({ lines, provider: ctx.target.provider });
      return { providerBatchId: "pb_1", state: { status: "in_progress", details: { lines } } };
    },
    async poll(_id, previous: NativeBatchState) {
      fake.polls += 1;
      const lines = previous.details!.lines as string[];
      return fake.polls === 1
        ? { ...previous, status: "in_progress", request_counts: { total: lines.length, completed: 1, failed: 0 } }
        : {
            ...previous,
            status: "completed",
            request_counts: { total: lines.length, completed: lines.length - 1, failed: 1 },
          };
    },
    async *results(_id, state): AsyncIterable<BatchResultLine> {
      // In any order, as providers return them; one line failed; one the provider never answered.
      const lines = [...(state.details!.lines as string[])].reverse();
      for (const custom_id of lines) {
        if (custom_id === "n-2") continue;
        yield custom_id === "n-1"
          ? {
              id: `r-${custom_id}`,
              custom_id,
              response: { status_code: 400, request_id: "req", body: { error: { message: "bad" } } },
              error: null,
            }
          : {
              id: `r-${custom_id}`,
              custom_id,
              response: {
                status_code: 200,
                request_id: `req-${custom_id}`,
                body: { model: "gpt-4o-mini", usage, choices: [] },
              },
              error: null,
            };
      }
    },
    async cancel(id) {
      fake.cancelled.push(id);
    },
  };
  return { nativeBatchApiFor: async (provider: string) => (provider === "openai" ? api : undefined) };
});

let gateway: TestGateway;
let upstream: OpenAIMock;
let client: OpenAI;
const services = () => gateway.gateway.services;
const signal = new AbortController().signal;

beforeAll(async () => {
  upstream = await startOpenAIMock({ guard: echoChat });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  client = new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
    },
  });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("native batches (engine side, a stand-in provider API)", () => {
  it("submits, polls, writes the provider's results in line order and logs them at the batch price", async () => {
    const input = Array.from({ length: 5 }, (_, i) => chatLine(`n-${i}`, `native ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await gateway.gateway.worker.drain();
    expect(fake.submitted).toEqual([{ lines: input.map((line) => line.custom_id), provider: "openai" }]);
    expect(await client.batches.retrieve(created.id)).toMatchObject({
      status: "in_progress",
      request_counts: { total: 5 },
    });

    await sweepBatches(services(), signal);
    expect((await client.batches.retrieve(created.id)).request_counts).toEqual({ total: 5, completed: 1, failed: 0 });
    await sweepBatches(services(), signal);
    const done = await client.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 5, completed: 3, failed: 2 });
    const output = (await fileText(client, done.output_file_id!))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(output.map((line) => line.custom_id)).toEqual(["n-0", "n-3", "n-4"]);
    const errors = (await fileText(client, done.error_file_id!))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(errors.map((line) => [line.custom_id, line.error?.code ?? line.response.status_code])).toEqual([
      ["n-1", 400],
      ["n-2", "missing_result"],
    ]);

    // Each result line the provider returned is one log, priced at half the catalog price.
    const full = costOf("openai", "gpt-4o-mini", { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 });
    expect(full.priced).toBe(true);
    await expect
      .poll(
        async () =>
          (await call(gateway, gateway.adminKey, "GET", "/v1/logs?limit=100&provider=openai")).body.data.length,
      )
      .toBe(4);
    const logs = (await call(gateway, gateway.adminKey, "GET", "/v1/logs?limit=100&provider=openai")).body.data;
    const priced = logs.filter((log: any) => log.status === 200);
    expect(priced).toHaveLength(3);
    for (const log of priced) {
      expect(log.cost).toBeCloseTo(full.total / 2, 10);
      expect(log.metadata.batch_id).toBe(created.id);
    }
    // A sweep after the end changes nothing.
    await sweepBatches(services(), signal);
    expect(await client.batches.retrieve(created.id)).toEqual(done);
  });

  it("cancels through the provider's API", async () => {
    fake.polls = 0;
    const fileId = await uploadJsonl(client, jsonl([chatLine("c-0", "x")]));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    await gateway.gateway.worker.drain();
    expect((await client.batches.cancel(created.id)).status).toBe("cancelling");
    expect(fake.cancelled).toEqual(["pb_1"]);
  });
});

describe("the sweep", () => {
  it("finalises a gateway batch whose lines all settled but whose finalise message was lost", async () => {
    const gatewayClient = client.withOptions({
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        "x-gateway-batch-mode": "gateway",
      },
    });
    const input = Array.from({ length: 12 }, (_, i) => chatLine(`s-${i}`, `sweep ${i}`));
    const fileId = await uploadJsonl(gatewayClient, jsonl(input));
    const created = await gatewayClient.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const { queue } = services().stores;
    for (;;) {
      const messages = await queue.receive("batches", { max: 10, visibilityTimeoutSeconds: 60 });
      if (messages.length === 0) break;
      const kept = messages.filter((message) => (message.body as { type: string }).type !== "finalise");
      await consumeBatches(kept, services());
      for (const message of messages) await queue.ack("batches", message.receipt);
    }
    const stuck = await gatewayClient.batches.retrieve(created.id);
    expect(stuck.status).toBe("in_progress");
    expect(stuck.request_counts).toEqual({ total: 12, completed: 12, failed: 0 });
    await sweepBatches(services(), signal);
    const done = await gatewayClient.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    expect((await fileText(gatewayClient, done.output_file_id!)).trim().split("\n")).toHaveLength(12);
  });

  it("sends a lost start again for a batch left validating", async () => {
    const gatewayClient = client.withOptions({
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${upstream.url}/v1`,
        "x-gateway-batch-mode": "gateway",
      },
    });
    const fileId = await uploadJsonl(gatewayClient, jsonl([chatLine("v-0", "x")]));
    const created = await gatewayClient.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    const { queue } = services().stores;
    // The start message is lost.
    for (const message of await queue.receive("batches", { max: 10, visibilityTimeoutSeconds: 60 }))
      await queue.ack("batches", message.receipt);
    await sweepBatches(services(), signal);
    expect((await queue.receive("batches", { max: 10, visibilityTimeoutSeconds: 0 })).length).toBe(0);
    await sweepBatches(services(), signal, { now: () => Date.now() + 11 * 60_000 });
    for (let round = 0; round < 10; round++) await gateway.gateway.worker.drain();
    expect((await gatewayClient.batches.retrieve(created.id)).status).toBe("completed");
  });
});

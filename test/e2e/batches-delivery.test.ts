import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { consumeBatches } from "../../core/features/batches/worker.ts";
import type { Services } from "../../core/services.ts";
import { startAwsGateway, type AwsGateway } from "../helpers/aws-gateway.ts";
import { chatLine, fileText, jsonl, uploadJsonl } from "../helpers/batches.ts";
import { echoChat } from "../helpers/echo-upstream.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * At-least-once delivery never duplicates or loses a line: every message of the `batches` queue (start, lines,
 * finalise) is handed to the consumer twice before it is acknowledged, on both store families (local SQLite queue,
 * and SQS / DynamoDB / S3 emulators). The output has exactly one result per line, in order, with exact counts, and
 * the provider saw each line once.
 */

interface Platform {
  url: string;
  adminKey: string;
  services: Services;
}

const LINES = 23;

async function runTwiceEach(services: Services): Promise<number> {
  const { queue } = services.stores;
  let rounds = 0;
  for (;;) {
    const messages = await queue.receive("batches", { max: 10, visibilityTimeoutSeconds: 60 });
    if (messages.length === 0) return rounds;
    rounds += 1;
    const first = await consumeBatches(messages, services);
    const second = await consumeBatches(messages, services);
    expect(first.failedIds).toEqual([]);
    expect(second.failedIds).toEqual([]);
    for (const message of messages) await queue.ack("batches", message.receipt);
  }
}

function deliveryTests(platform: () => Platform, upstream: () => OpenAIMock) {
  it("runs each line once and writes one result per line when every message is delivered twice", async () => {
    const { url, adminKey, services } = platform();
    const client = new OpenAI({
      apiKey: "sk-upstream",
      baseURL: `${url}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        "x-gateway-api-key": adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-batch-mode": "gateway",
        "x-gateway-custom-host": `${upstream().url}/v1`,
      },
    });
    const input = Array.from({ length: LINES }, (_, i) => chatLine(`d-${i}`, i === 5 ? "FAIL" : `text ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const before = upstream().requests.length;
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    expect(await runTwiceEach(services)).toBeGreaterThan(2);
    const done = await client.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: LINES, completed: LINES - 1, failed: 1 });
    expect(upstream().requests.length - before).toBe(LINES);
    const output = (await fileText(client, done.output_file_id!))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    expect(output.map((line) => line.custom_id)).toEqual(
      input.map((line) => line.custom_id).filter((id) => id !== "d-5"),
    );
    const errors = (await fileText(client, done.error_file_id!)).trim().split("\n");
    expect(errors).toHaveLength(1);
  });
}

describe("local stores", () => {
  let gateway: TestGateway;
  let upstream: OpenAIMock;
  beforeAll(async () => {
    upstream = await startOpenAIMock({ guard: echoChat });
    // The loop polls once at start and then sleeps: the test hands the messages to the consumer itself.
    gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "600000" });
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  deliveryTests(
    () => ({ url: gateway.url, adminKey: gateway.adminKey, services: gateway.gateway.services }),
    () => upstream,
  );
});

describe("AWS stores (dynalite + fauxqs)", () => {
  let gateway: AwsGateway;
  let upstream: OpenAIMock;
  beforeAll(async () => {
    upstream = await startOpenAIMock({ guard: echoChat });
    gateway = await startAwsGateway(inject("emulators"));
  });
  afterAll(async () => {
    await gateway?.close();
    await upstream?.close();
  });
  deliveryTests(
    () => gateway,
    () => upstream,
  );

  it("finishes a batch delivered the way Lambda's SQS event source does", async () => {
    const client = new OpenAI({
      apiKey: "sk-upstream",
      baseURL: `${gateway.url}/v1`,
      maxRetries: 0,
      defaultHeaders: {
        "x-gateway-api-key": gateway.adminKey,
        "x-gateway-provider": "openai",
        "x-gateway-batch-mode": "gateway",
        "x-gateway-custom-host": `${upstream.url}/v1`,
      },
    });
    const input = Array.from({ length: 30 }, (_, i) => chatLine(`s-${i}`, `sqs ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    for (let round = 0; round < 50 && (await gateway.deliver()) > 0; round++) {
      // deliver until the queue is empty
    }
    await gateway.tick();
    const done = await client.batches.retrieve(created.id);
    expect(done.status).toBe("completed");
    expect(done.request_counts).toEqual({ total: 30, completed: 30, failed: 0 });
    const output = (await fileText(client, done.output_file_id!)).trim().split("\n");
    expect(output.map((line) => JSON.parse(line).custom_id)).toEqual(input.map((line) => line.custom_id));
  });
});

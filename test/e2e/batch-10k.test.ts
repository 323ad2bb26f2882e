import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chatLine, fileText, jsonl, uploadJsonl } from "../helpers/batches.ts";
import { echoChat } from "../helpers/echo-upstream.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * A 10,000-line gateway-run batch on the in-process gateway, run by its own worker loop (as `npm start` runs it):
 * exact counts, one output line per input line in order. Prints the duration and the process's peak RSS (sampled
 * every 100 ms), the figures the issue asks for.
 */

const LINES = 10_000;
let gateway: TestGateway;
let upstream: OpenAIMock;

beforeAll(async () => {
  upstream = await startOpenAIMock({ guard: echoChat });
  gateway = await startTestGateway({ GATEWAY_WORKER_POLL_MS: "20", GATEWAY_LOG_BODIES: "false" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("a 10,000-line batch", () => {
  it("finishes with exact counts", { timeout: 600_000 }, async () => {
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
    const input = Array.from({ length: LINES }, (_, i) => chatLine(`k-${String(i).padStart(5, "0")}`, `line ${i}`));
    const fileId = await uploadJsonl(client, jsonl(input));

    let peakRss = process.memoryUsage().rss;
    const sampler = setInterval(() => {
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
    }, 100);
    const started = performance.now();
    const created = await client.batches.create({
      input_file_id: fileId,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });
    let batch = created;
    while (!["completed", "failed", "expired", "cancelled"].includes(batch.status)) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      batch = await client.batches.retrieve(created.id);
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    console.log(
      `batch-10k: ${LINES} lines in ${seconds.toFixed(1)} s (${Math.round(LINES / seconds)} lines/s); peak RSS ${(peakRss / 2 ** 20).toFixed(0)} MB`,
    );

    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    const output = (await fileText(client, batch.output_file_id!)).trim().split("\n");
    expect(output).toHaveLength(LINES);
    const ids = output.map((line) => JSON.parse(line).custom_id);
    expect(ids).toEqual(input.map((line) => line.custom_id));
  });
});

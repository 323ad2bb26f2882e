import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BundleGateway, removeBuiltBundle, startBundleGateway } from "../helpers/bundle-gateway.ts";
import { chatLine, jsonl } from "../helpers/batches.ts";
import { type OpenAIMock, startOpenAIMock } from "../mocks/openai.ts";

/**
 * The kill-and-resume test, on the gateway users run (the `npm start` bundle): a 2,000-line gateway-run
 * batch against a slow-ish upstream (5 ms a call), the gateway killed with SIGKILL after some lines settled, then
 * started again on the same data folder. The SQLite queue delivers the messages the dead process held once their
 * visibility timeout passes (GATEWAY_QUEUE_VISIBILITY_SECONDS, short here), and the batch completes with exactly
 * one result per line, in order.
 */

const LINES = 2000;
const ENV = { GATEWAY_QUEUE_VISIBILITY_SECONDS: "3", GATEWAY_WORKER_POLL_MS: "50", GATEWAY_LOG_BODIES: "false" };

let upstream: OpenAIMock;
let first: BundleGateway | undefined;
let second: BundleGateway | undefined;

beforeAll(async () => {
  upstream = await startOpenAIMock();
  upstream.setFault({ delayMs: 5 });
});

afterAll(async () => {
  await second?.close();
  await first?.close();
  if (first) rmSync(first.dataDir, { recursive: true, force: true });
  await upstream?.close();
  await removeBuiltBundle();
});

const clientOf = (gateway: BundleGateway, routed: boolean) =>
  new OpenAI({
    apiKey: "sk-upstream",
    baseURL: `${gateway.url}/v1`,
    maxRetries: 0,
    defaultHeaders: {
      "x-gateway-api-key": gateway.adminKey,
      ...(routed
        ? {
            "x-gateway-provider": "openai",
            "x-gateway-custom-host": `${upstream.url}/v1`,
            "x-gateway-batch-mode": "gateway",
          }
        : {}),
    },
  });

describe("kill and resume", () => {
  it("completes a 2,000-line batch after the gateway is killed mid-batch", { timeout: 300_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "gateway-kill-"));
    first = await startBundleGateway(ENV, { dataDir });
    const input = Array.from({ length: LINES }, (_, i) => chatLine(`line-${String(i).padStart(4, "0")}`, `text ${i}`));
    const file = await clientOf(first, false).files.create({
      file: await toFile(Buffer.from(jsonl(input)), "input.jsonl"),
      purpose: "batch",
    });
    const created = await clientOf(first, true).batches.create({
      input_file_id: file.id,
      endpoint: "/v1/chat/completions",
      completion_window: "24h",
    });

    // Kill once some lines settled, well before all did.
    const killBy = Date.now() + 60_000;
    for (;;) {
      if (Date.now() > killBy) throw new Error(`the batch made no progress:\n${first.output().slice(-3000)}`);
      const batch = await clientOf(first, false).batches.retrieve(created.id);
      const settled = batch.request_counts!.completed + batch.request_counts!.failed;
      expect(batch.status).not.toBe("completed");
      if (settled >= 100) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await first.kill("SIGKILL");
    const callsBefore = upstream.requests.length;

    second = await startBundleGateway(ENV, { dataDir, adminKey: first.adminKey });
    const client = clientOf(second, false);
    let batch = await client.batches.retrieve(created.id);
    const settledAtRestart = batch.request_counts!.completed + batch.request_counts!.failed;
    expect(settledAtRestart).toBeLessThan(LINES);
    const deadline = Date.now() + 240_000;
    while (batch.status !== "completed" && Date.now() < deadline) {
      expect(["in_progress", "finalizing"]).toContain(batch.status);
      await new Promise((resolve) => setTimeout(resolve, 200));
      batch = await client.batches.retrieve(created.id);
    }
    expect(batch.status).toBe("completed");
    expect(batch.request_counts).toEqual({ total: LINES, completed: LINES, failed: 0 });
    const output = (await (await client.files.content(batch.output_file_id!)).text()).trim().split("\n");
    const ids = output.map((line) => JSON.parse(line).custom_id);
    expect(ids).toHaveLength(LINES);
    expect(new Set(ids).size).toBe(LINES);
    expect(ids).toEqual(input.map((line) => line.custom_id));
    // The provider saw each line about once: lines in flight at the kill may run twice, never the whole batch.
    expect(upstream.requests.length).toBeLessThan(LINES + 100);
    expect(upstream.requests.length).toBeGreaterThan(callsBefore);
  });
});

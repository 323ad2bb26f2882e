import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import { StreamTranscript } from "../../../../core/inference/gateway/stream/transcript.ts";
import { RecordsLogSink } from "../../../../core/observe/logs/records-log-sink.ts";
import { RequestLogger } from "../../../../core/observe/logs/request-logger.ts";
import { JsonText } from "../../../../core/observe/logs/late-json.ts";
import { UploadedFile } from "../../../../core/providers/uploaded-file.ts";
import { marshallItem } from "../../../../core/platform/aws/dynamo-values.ts";
import { createLocalStores, type LocalStores } from "../../../../core/platform/local/local-stores.ts";
import type { RecordItem, Records } from "../../../../core/store/ports.ts";

let dataDir: string;
let stores: LocalStores;
let logger: RequestLogger;

/** A logger over the test's stores (each test that observes gets its own, so observers do not pile up). */
const newLogger = () =>
  new RequestLogger(stores.logSink, stores.blobs, {
    retentionDays: 30,
    threshold: 5,
    backoffMs: 60_000,
    timeoutMs: 15_000,
  });

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-logger-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  logger = newLogger();
});
afterAll(async () => {
  await stores.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const log = (id: string, requestBody: unknown, responseBody: unknown): RequestLog => ({
  id,
  createdAt: new Date().toISOString(),
  traceId: `trace-${id}`,
  organisationId: "org_1",
  workspaceId: "ws_1",
  method: "POST",
  route: "/v1/chat/completions",
  path: "/v1/chat/completions",
  status: 200,
  latencyMs: 12,
  source: "gateway",
  requestBody,
  responseBody,
});

describe("request log bodies", () => {
  it("keeps small bodies inline in the log record", async () => {
    const request = { model: "m", messages: [{ role: "user", content: "hi" }] };
    expect(await logger.write(log("log_small", request, { id: "r" }), 30, 80)).toBe(true);
    const item = await stores.logSink.records.get("LOG#log_small", "LOG");
    expect(item).toMatchObject({ requestBody: request, responseBody: { id: "r" }, status: 200 });
    expect(item?.bodiesKey).toBeUndefined();
    expect(await logger.get("log_small")).toMatchObject({ requestBody: request, responseBody: { id: "r" } });
  });

  it("lets go of the bodies and headers once the store has them; observers get the rest, the record everything", async () => {
    const observing = newLogger();
    const seen: RequestLog[] = [];
    observing.observe((entry) => void seen.push({ ...entry }));
    const request = { model: "m", messages: [{ role: "user", content: "hi" }] };
    const entry = { ...log("log_released", request, { id: "r" }), headers: { "x-team": "a" } };
    const writing = observing.write(entry);
    // Released before the write is acknowledged: nothing keeps them alive while the store works.
    expect(entry.requestBody).toBeUndefined();
    expect(entry.responseBody).toBeUndefined();
    expect(entry.headers).toBeUndefined();
    expect(await writing).toBe(true);
    expect(seen).toEqual([expect.objectContaining({ id: "log_released", status: 200, requestBody: undefined })]);
    expect(await stores.logSink.records.get("LOG#log_released", "LOG")).toMatchObject({
      requestBody: request,
      responseBody: { id: "r" },
      headers: { "x-team": "a" },
    });
  });

  it("stores bodies over 16 KB in Blobs, not in the record, and reads them back", async () => {
    const answer = { text: "x".repeat(20_000) };
    await logger.write(log("log_large", { model: "m" }, answer));
    const item = await stores.logSink.records.get("LOG#log_large", "LOG");
    expect(item?.bodiesKey).toMatch(/^logs\/\d{4}-\d{2}-\d{2}\/log_large\.json$/);
    expect(item && "requestBody" in item).toBe(false);
    expect(item && "responseBody" in item).toBe(false);
    expect(await logger.get("log_large")).toMatchObject({ requestBody: { model: "m" }, responseBody: answer });
  });

  it("cuts a body over 2 MB to its head, in Blobs", async () => {
    const huge = "y".repeat(3 * 1024 * 1024);
    await logger.write(log("log_huge", { model: "m" }, huge));
    const stored = await logger.get("log_huge");
    expect(stored?.requestBody).toEqual({ model: "m" });
    expect(stored?.responseBody).toMatchObject({ truncated: true, bytes: huge.length });
    expect((stored!.responseBody as { head: string }).head).toHaveLength(2 * 1024 * 1024);
  });
});

describe("log observers", () => {
  it("all see each written log, side by side; a failing one neither stops the others nor the write", async () => {
    const observed = newLogger();
    const seen: string[] = [];
    let releaseSlow!: () => void;
    const slow = new Promise<void>((resolve) => {
      releaseSlow = resolve;
    });
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    observed.observe((entry, stored) => {
      seen.push(`sync ${entry.id} ${stored}`);
    });
    observed.observe(() => {
      throw new Error("observer throws");
    });
    observed.observe(async () => {
      throw new Error("observer rejects");
    });
    observed.observe(async (entry) => {
      await slow;
      seen.push(`slow ${entry.id}`);
    });
    let settled = false;
    const written = observed.write(log("log_observed", { model: "m" }, { id: "r" })).then((stored) => {
      settled = true;
      return stored;
    });
    await expect.poll(() => seen).toContain("sync log_observed true");
    // The write waits for the observers that return a promise.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(settled).toBe(false);
    releaseSlow();
    expect(await written).toBe(true);
    expect(seen).toEqual(["sync log_observed true", "slow log_observed"]);
    expect(errors.mock.calls.map((call) => String(call[1]))).toEqual([
      "Error: observer throws",
      "Error: observer rejects",
    ]);
    expect(await observed.get("log_observed")).toMatchObject({ id: "log_observed" });
    errors.mockRestore();
  });
});

/** A logger whose records go through DynamoDB's marshalling (which takes plain values only) into `items`. */
function plainOnlyLogger(): { items: RecordItem[]; plainLogger: RequestLogger } {
  const items: RecordItem[] = [];
  const plainOnly = {
    put: async (item: RecordItem) => {
      marshallItem(item);
      items.push(item);
    },
  } as unknown as Records;
  const plainLogger = new RequestLogger(new RecordsLogSink(plainOnly, stores.blobs), stores.blobs, {
    retentionDays: 30,
    threshold: 5,
    backoffMs: 60_000,
    timeoutMs: 15_000,
  });
  return { items, plainLogger };
}

describe("streamed answers assembled when the log is stored", () => {
  const body = [
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}',
    'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[],"usage":{"prompt_tokens":2,"completion_tokens":2,"total_tokens":4}}',
    "data: [DONE]",
  ]
    .map((event) => `${event}\n\n`)
    .join("");
  const transcript = () =>
    new StreamTranscript("chat", [Buffer.from(body.slice(0, 120)), Buffer.from(body.slice(120))]);
  const answer = {
    id: "c1",
    object: "chat.completion",
    model: "m-1",
    choices: [{ index: 0, message: { role: "assistant", content: "Hi there" }, finish_reason: "stop" }],
    usage: { total_tokens: 4 },
    streamed_chunks: 3,
  };

  it("by the local sink's storage thread, which stores the answer the chunks spell", async () => {
    expect(await logger.write(log("log_late", { model: "m" }, transcript()), 30, 600)).toBe(true);
    expect((await stores.logSink.records.get("LOG#log_late", "LOG"))?.responseBody).toMatchObject(answer);
  });

  it("as plain values for a store that takes nothing else (DynamoDB refuses class instances)", async () => {
    const { items, plainLogger } = plainOnlyLogger();
    expect(await plainLogger.write(log("log_plain", { model: "m" }, transcript()), 30, 600)).toBe(true);
    expect(items[0]?.responseBody).toMatchObject(answer);
  });

  it("a multipart request's body (its UploadedFile) as the plain value it serialises to, on DynamoDB too", async () => {
    const { items, plainLogger } = plainOnlyLogger();
    const file = new UploadedFile("a.wav", "audio/wav", new Uint8Array(64_000));
    const stored = (id: string) => items.find((item) => item.pk === `LOG#${id}`)?.requestBody;
    // Measured (no wire sizes) and small: inline, where DynamoDB refused the class instance and the log was lost.
    expect(await plainLogger.write(log("log_multipart", { model: "whisper-1", file }, { text: "hi" }))).toBe(true);
    expect(stored("log_multipart")).toEqual({ model: "whisper-1", file: file.toJSON() });
    // Sizes from the wire (the upload's bytes) say small too.
    const small = log("log_multipart_small", { model: "whisper-1", file }, { text: "hi" });
    expect(await plainLogger.write(small, 30, 900)).toBe(true);
    expect(stored("log_multipart_small")).toEqual({ model: "whisper-1", file: file.toJSON() });
  });

  it("once, also when the bodies must be measured", async () => {
    const late = transcript();
    const assemble = vi.spyOn(late, "assemble");
    expect(await logger.write(log("log_measured", { model: "m" }, late), 30, 20_000)).toBe(true);
    expect((await stores.logSink.records.get("LOG#log_measured", "LOG"))?.responseBody).toMatchObject(answer);
    expect(assemble).toHaveBeenCalledTimes(1);
  });

  it("an answer logged as its JSON text is stored as that text's value, by the thread or here", async () => {
    const text = '{"id":"r1", "object":"chat.completion","choices":[{"message":{"content":"a\\"b"}}]}';
    const value = JSON.parse(text);
    expect(await logger.write(log("log_text", { model: "m" }, new JsonText(text, value)), 30, 300)).toBe(true);
    expect((await stores.logSink.records.get("LOG#log_text", "LOG"))?.responseBody).toEqual(value);
    const { items, plainLogger } = plainOnlyLogger();
    expect(await plainLogger.write(log("log_text_plain", { model: "m" }, new JsonText(text, value)), 30, 300)).toBe(
      true,
    );
    expect(items[0]?.responseBody).toBe(value);
  });
});

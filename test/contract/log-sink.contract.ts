import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { StreamTranscript } from "../../core/gateway/stream/transcript.ts";
import type { RequestLog } from "../../core/logs/log-record.ts";
import { RequestLogger } from "../../core/logs/request-logger.ts";
import type { Stores } from "../../core/store/ports.ts";
import { logSearchContract } from "./log-search.contract.ts";

/** An organisation no other test (or earlier run against the same emulator) uses. */
const organisation = () => `org_${randomUUID()}`;

const log = (organisationId: string, overrides: Partial<RequestLog> = {}): RequestLog => ({
  id: `log_${randomUUID()}`,
  createdAt: new Date().toISOString(),
  traceId: `trace-${randomUUID()}`,
  organisationId,
  workspaceId: "ws_1",
  method: "POST",
  route: "/v1/chat/completions",
  path: "/v1/chat/completions",
  status: 200,
  latencyMs: 12,
  headers: { "content-type": "application/json" },
  source: "gateway",
  ...overrides,
});

const streamed = [
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"role":"assistant","content":"Hi"},"finish_reason":null}]}',
  'data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"m-1","choices":[{"index":0,"delta":{"content":" there"},"finish_reason":"stop"}]}',
  "data: [DONE]",
]
  .map((event) => `${event}\n\n`)
  .join("");

/**
 * What every platform's LogSink must do: a log written through it (RequestLogger.write, as the gateway writes)
 * reads back the same through the sink's Records and the Blobs port (RequestLogger.get and list: what the logs
 * API answers), its record keyed, indexed and expiring as core/logs/log-layout.ts lays it out.
 */
export function logSinkContract(getStores: () => Stores) {
  describe("LogSink", () => {
    const newLogger = () => {
      const stores = getStores();
      return new RequestLogger(stores.logSink, stores.blobs, {
        retentionDays: 30,
        threshold: 5,
        backoffMs: 60_000,
        timeoutMs: 15_000,
      });
    };

    it("stores a log with small bodies inline in its record, readable by id and found by search", async () => {
      const logger = newLogger();
      const org = organisation();
      const request = { model: "m", messages: [{ role: "user", content: "hi" }] };
      const entry = log(org, { requestBody: request, responseBody: { id: "r" }, metadata: { team: "a" } });
      const { id, createdAt } = entry;
      expect(await logger.write(entry, 7, 80)).toBe(true);

      const item = await getStores().logSink.records.get(`LOG#${id}`, "LOG");
      expect(item).toMatchObject({
        id,
        requestBody: request,
        responseBody: { id: "r" },
        headers: { "content-type": "application/json" },
        ttl: Math.floor(Date.parse(createdAt) / 1000) + 7 * 86_400,
      });
      expect(item?.bodiesKey).toBeUndefined();
      expect(await logger.get(id)).toMatchObject({ id, status: 200, requestBody: request, metadata: { team: "a" } });
      const page = await logger.list(org, {}, 10);
      expect(page.items.map((listed) => listed.id)).toEqual([id]);
      // Searches answer logs without their bodies.
      expect(page.items[0]).toMatchObject({
        id,
        metadata: { team: "a" },
        headers: { "content-type": "application/json" },
      });
      expect(page.items[0]).not.toHaveProperty("requestBody");
      // Another organisation's listing does not see it.
      expect((await logger.list(organisation(), {}, 10)).items).toEqual([]);
    });

    it("stores bodies over 16 KB in one blob, not in the record, and reads them back", async () => {
      const logger = newLogger();
      const answer = { text: "x".repeat(20_000) };
      const entry = log(organisation(), { requestBody: { model: "m" }, responseBody: answer });
      expect(await logger.write(entry)).toBe(true);

      const item = await getStores().logSink.records.get(`LOG#${entry.id}`, "LOG");
      expect(item?.bodiesKey).toBe(`logs/${entry.createdAt.slice(0, 10)}/${entry.id}.json`);
      expect(item && "responseBody" in item).toBe(false);
      const blob = await getStores().blobs.get(item!.bodiesKey as string);
      expect(JSON.parse(await new Response(blob!.body).text())).toEqual({ request: { model: "m" }, response: answer });
      expect(await logger.get(entry.id)).toMatchObject({ requestBody: { model: "m" }, responseBody: answer });
    });

    it("stores a deferred body (a streamed answer's transcript) as the plain answer it spells", async () => {
      const logger = newLogger();
      const transcript = new StreamTranscript("chat", [
        Buffer.from(streamed.slice(0, 100)),
        Buffer.from(streamed.slice(100)),
      ]);
      const entry = log(organisation(), { stream: true, requestBody: { model: "m" }, responseBody: transcript });
      expect(await logger.write(entry, 30, 400)).toBe(true);

      const item = await getStores().logSink.records.get(`LOG#${entry.id}`, "LOG");
      expect(item?.responseBody).toMatchObject({
        id: "c1",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: "Hi there" }, finish_reason: "stop" }],
      });
      expect(item?.responseBody).not.toBeInstanceOf(StreamTranscript);
    });

    logSearchContract(getStores, newLogger);
  });
}

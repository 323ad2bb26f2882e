import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RequestLog } from "../../../core/logs/log-record.ts";
import { RequestLogger } from "../../../core/logs/request-logger.ts";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";

let dataDir: string;
let stores: LocalStores;
let logger: RequestLogger;

beforeAll(() => {
  dataDir = mkdtempSync(join(tmpdir(), "gateway-logger-"));
  stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
  logger = new RequestLogger(stores.logs, stores.blobs, {
    retentionDays: 30,
    threshold: 5,
    backoffMs: 60_000,
    timeoutMs: 15_000,
  });
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
    const item = await stores.logs.get("LOG#log_small", "LOG");
    expect(item).toMatchObject({ requestBody: request, responseBody: { id: "r" }, status: 200 });
    expect(item?.bodiesKey).toBeUndefined();
    expect(await logger.get("log_small")).toMatchObject({ requestBody: request, responseBody: { id: "r" } });
  });

  it("stores bodies over 16 KB in Blobs, not in the record, and reads them back", async () => {
    const answer = { text: "x".repeat(20_000) };
    await logger.write(log("log_large", { model: "m" }, answer));
    const item = await stores.logs.get("LOG#log_large", "LOG");
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

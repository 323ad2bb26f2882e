import { describe, expect, it } from "vitest";
import type { Settings } from "../../../../core/config/settings.ts";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import {
  OtlpLogExporter,
  otlpLogsBody,
  parseOtlpHeaders,
} from "../../../../core/features/mcp/endpoint/otlp-exporter.ts";
import { argumentsForLog, canonicalJson } from "../../../../core/features/mcp/endpoint/request-log.ts";

describe("MCP log arguments", () => {
  it("hashes by default, alike whatever the key order", () => {
    const a = argumentsForLog({ b: 1, a: { y: "s", x: [1, 2] } }, "hash");
    const b = argumentsForLog({ a: { x: [1, 2], y: "s" }, b: 1 }, "hash");
    expect(a.argumentsHash).toMatch(/^[0-9a-f]{64}$/);
    expect(a).toEqual(b);
    expect(a.arguments).toBeUndefined();
    expect(argumentsForLog({ b: 2 }, "hash").argumentsHash).not.toBe(a.argumentsHash);
  });

  it("masks every value but keeps the structure", () => {
    expect(argumentsForLog({ token: "s3cret", n: 4, list: ["a", { k: true }] }, "masked")).toEqual({
      arguments: { token: "***", n: "***", list: ["***", { k: "***" }] },
    });
  });

  it("keeps them in full only when asked", () => {
    expect(argumentsForLog({ q: "x" }, "full")).toEqual({ arguments: { q: "x" } });
    expect(argumentsForLog(undefined, "full")).toEqual({});
  });

  it("canonical JSON sorts keys and drops undefined", () => {
    expect(canonicalJson({ b: 1, a: undefined, c: [{ z: 1, y: 2 }] })).toBe('{"b":1,"c":[{"y":2,"z":1}]}');
  });
});

const log = (id: string, extra: Partial<RequestLog> = {}): RequestLog => ({
  id,
  createdAt: "2026-01-01T00:00:00.000Z",
  traceId: "trace-not-w3c",
  organisationId: "org_1",
  method: "POST",
  route: "/mcp/:server",
  path: "/mcp/s",
  status: 200,
  latencyMs: 3.5,
  source: "gateway",
  mcp: { serverId: "mcps_1", serverSlug: "s", method: "tools/call", name: "echo", argumentsHash: "ab" },
  ...extra,
});

describe("OTLP log export", () => {
  it("encodes log records as OTLP JSON, W3C trace ids only in traceId", () => {
    const body = otlpLogsBody([log("log_1"), log("log_2", { status: 429, traceId: "A".repeat(32) })], "svc");
    const records = body.resourceLogs[0]!.scopeLogs[0]!.logRecords;
    expect(records[0]).toMatchObject({
      timeUnixNano: "1767225600000000000",
      severityText: "INFO",
      body: { stringValue: "tools/call echo" },
    });
    expect(records[0]).not.toHaveProperty("traceId");
    expect(records[0]!.attributes).toContainEqual({ key: "gateway.trace_id", value: { stringValue: "trace-not-w3c" } });
    expect(records[0]!.attributes).toContainEqual({ key: "gateway.latency_ms", value: { doubleValue: 3.5 } });
    expect(records[1]).toMatchObject({ severityText: "ERROR", traceId: "a".repeat(32) });
  });

  it("parses OTEL_EXPORTER_OTLP_HEADERS", () => {
    expect(parseOtlpHeaders("Api-Key=a%3Db, x=1 ,bad,=v")).toEqual({ "api-key": "a=b", x: "1" });
  });

  it("bounds its queue, dropping the oldest records", async () => {
    const exporter = new OtlpLogExporter({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_SERVICE_NAME: "svc",
      OTEL_BLRP_MAX_QUEUE_SIZE: 3,
      OTEL_BLRP_MAX_EXPORT_BATCH_SIZE: 100,
      OTEL_BLRP_SCHEDULE_DELAY: 600_000,
      OTEL_BLRP_EXPORT_TIMEOUT: 1000,
    } as Settings);
    for (let i = 0; i < 5; i++) exporter.enqueue(log(`log_${i}`));
    expect(exporter.dropped).toBe(2);
    expect(exporter.url).toBe("http://127.0.0.1:9/v1/logs");
    // A refused connection is reported, never thrown.
    await expect(exporter.flush()).resolves.toBeUndefined();
  });
});

import { describe, expect, it } from "vitest";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import type { LogObserver } from "../../../../core/observe/logs/request-logger.ts";
import { observeLogs } from "../../../../core/observe/metrics/observe.ts";
import { inMemorySpans } from "../../../helpers/in-memory-spans.ts";

/**
 * The generation span of each inference log, with an in-memory OpenTelemetry SDK registered for this file. The
 * span module (and the OpenTelemetry API) is loaded by the first inference log, not when the observers are set up:
 * the first log's span must still be recorded, and so must every later one.
 */

const exporter = inMemorySpans();

const log = (overrides: Partial<RequestLog> = {}): RequestLog =>
  ({
    id: "log_1",
    createdAt: "2026-11-24T12:00:00.000Z",
    traceId: "trace-generation",
    organisationId: "org_1",
    workspaceId: "ws_1",
    method: "POST",
    route: "/v1/chat/completions",
    path: "/v1/chat/completions",
    status: 200,
    source: "gateway",
    provider: "openai",
    requestedModel: "gpt-4o-mini",
    answeredModel: "gpt-4o-mini-2024-07-18",
    latencyMs: 250,
    usage: { promptTokens: 12, completionTokens: 5, totalTokens: 17 },
    ...overrides,
  }) as RequestLog;

/** The observers observeLogs registers, called as the request logger calls them (awaiting what they return). */
function observers(): (log: RequestLog) => Promise<void> {
  const registered: LogObserver[] = [];
  observeLogs({
    logger: { observe: (observer: LogObserver) => registered.push(observer), breaker: undefined },
    analytics: { record: () => undefined },
    settings: { ENABLE_PROMETHEUS: false },
    stores: { counters: {} },
  } as never);
  return async (entry) => {
    for (const observer of registered) await observer(entry, false);
  };
}

describe("generation spans (OpenTelemetry API loaded by the first inference log)", () => {
  it("records the first inference log's span and the next ones', with the gen_ai attributes", async () => {
    const observe = observers();
    await observe(log());
    await observe(log({ id: "log_2", status: 502, error: { message: "upstream failed" } as never }));
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(["gateway.generation", "gateway.generation"]);
    expect(spans[0]!.attributes).toMatchObject({
      "gateway.log_id": "log_1",
      "gen_ai.system": "openai",
      "gen_ai.request.model": "gpt-4o-mini",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 5,
    });
    expect(spans[0]!.endTime[0] * 1000 + spans[0]!.endTime[1] / 1e6 - Date.parse(log().createdAt)).toBeCloseTo(250, 0);
    expect(spans[1]!.status.code).toBe(2); // SpanStatusCode.ERROR
  });

  it("gives logs that are not inference requests no span", async () => {
    const observe = observers();
    await observe(log({ provider: undefined, requestedModel: undefined }));
    await observe(log({ source: "control" as never }));
    expect(exporter.getFinishedSpans()).toEqual([]);
  });
});

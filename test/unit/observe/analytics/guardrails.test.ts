import { afterEach, describe, expect, it } from "vitest";
import { countLogs } from "../../../../core/observe/analytics/counting.ts";
import { GUARDRAIL_CAP, OTHER } from "../../../../core/observe/analytics/keys.ts";
import { AnalyticsReader } from "../../../../core/observe/analytics/reader.ts";
import type { GuardrailVerdict } from "../../../../core/inference/guardrails/types.ts";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import { openDatabase } from "../../../../core/platform/local/sqlite.ts";
import { SqliteCounters } from "../../../../core/platform/local/sqlite-counters.ts";
import { SqliteRecords } from "../../../../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../../../../core/platform/local/write-batcher.ts";

/** The guardrails view of analytics: counted from the logs' verdicts, read back per guardrail and per day. */

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

function stores() {
  const db = openDatabase(":memory:");
  const writes = new WriteBatcher(db);
  const counters = new SqliteCounters(db, writes);
  const records = new SqliteRecords(db, writes);
  closers.push(() => {
    writes.flush();
    db.close();
  });
  return { counters, records };
}

/** Counts logs as the recorder does: rounds 1-2 inside countLogs, then its plan. */
async function count(store: ReturnType<typeof stores>, logs: RequestLog[]) {
  const plan = await countLogs(store, logs);
  for (const [key, { amount, expiresAt }] of plan.adds) await store.counters.add(key, amount, { expiresAt });
  for (const item of plan.puts.values()) await store.records.put(item);
}

const NOW = Date.now();

function verdict(id: string, passed: boolean[], overrides: Partial<GuardrailVerdict> = {}): GuardrailVerdict {
  return {
    id,
    phase: "input",
    verdict: passed.every(Boolean),
    deny: true,
    async: false,
    soft_deny_200: false,
    transformed: false,
    checks: passed.map((ok, index) => ({
      id: `default.check${index}`,
      verdict: ok,
      explanation: ok ? "passed" : "failed",
      transformed: false,
      execution_time_ms: 1,
    })),
    execution_time_ms: 2.5,
    created_at: new Date(NOW).toISOString(),
    ...overrides,
  };
}

let logCount = 0;
function log(guardrails: GuardrailVerdict[] | undefined, workspaceId = "ws_1"): RequestLog {
  return {
    id: `log_${++logCount}`,
    createdAt: new Date(NOW).toISOString(),
    traceId: "t",
    organisationId: "org_1",
    workspaceId,
    method: "POST",
    route: "/v1/chat/completions",
    path: "/v1/chat/completions",
    status: guardrails?.some((v) => !v.verdict && v.deny) ? 446 : 200,
    provider: "openai",
    requestedModel: "gpt-4o-mini",
    latencyMs: 10,
    source: "gateway",
    guardrails,
  };
}

const range = { organisationId: "org_1", from: NOW - 3_600_000, to: NOW + 60_000 };

describe("guardrail analytics", () => {
  it("counts runs, failures, denials, checks and time per guardrail and per day", async () => {
    const store = stores();
    await count(store, [
      log([verdict("gr_pii", [true, true]), verdict("gr_words", [false], { deny: false })]),
      log([verdict("gr_pii", [true, false])]),
      log([verdict("gr_pii", [true, true], { async: true, execution_time_ms: 400 })]),
      log(undefined),
    ]);
    const { byGuardrail, byDay } = await new AnalyticsReader(store.counters, store.records).guardrails(range);
    expect(byGuardrail.get("gr_pii")).toEqual({
      runs: 3,
      failed: 1,
      denied: 1,
      checksRun: 6,
      checksFailed: 1,
      timeMicros: 405_000,
    });
    expect(byGuardrail.get("gr_words")).toMatchObject({ runs: 1, failed: 1, denied: 0, checksFailed: 1 });
    const today = new Date(NOW).toISOString().slice(0, 10);
    expect(byDay.get(today)).toMatchObject({ runs: 4, failed: 2, denied: 1, checksRun: 7 });
  });

  it("keeps to the workspace asked for", async () => {
    const store = stores();
    await count(store, [log([verdict("gr_a", [true])], "ws_1"), log([verdict("gr_b", [false])], "ws_2")]);
    const reader = new AnalyticsReader(store.counters, store.records);
    const { byGuardrail } = await reader.guardrails({ ...range, workspaceId: "ws_2" });
    expect([...byGuardrail.keys()]).toEqual(["gr_b"]);
  });

  it("counts guardrails past the daily cap of a workspace as `other`", async () => {
    const store = stores();
    const logs = Array.from({ length: GUARDRAIL_CAP + 5 }, (_, index) => log([verdict(`gr_${index}`, [true])]));
    await count(store, logs);
    const { byGuardrail } = await new AnalyticsReader(store.counters, store.records).guardrails(range);
    expect(byGuardrail.size).toBe(GUARDRAIL_CAP + 1);
    expect(byGuardrail.get(OTHER)?.runs).toBe(5);
    const total = [...byGuardrail.values()].reduce((sum, totals) => sum + totals.runs, 0);
    expect(total).toBe(GUARDRAIL_CAP + 5);
  });

  it("skips verdicts that cannot be counted instead of failing the batch", async () => {
    const store = stores();
    const broken = { ...log([verdict("gr_ok", [true])]) };
    (broken.guardrails as unknown[]).push(null, { id: 7 });
    await count(store, [broken]);
    const { byGuardrail } = await new AnalyticsReader(store.counters, store.records).guardrails(range);
    expect([...byGuardrail.keys()]).toEqual(["gr_ok"]);
  });
});

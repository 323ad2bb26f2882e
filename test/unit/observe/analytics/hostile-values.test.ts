import { afterEach, describe, expect, it, vi } from "vitest";
import { countLogs } from "../../../../core/observe/analytics/counting.ts";
import { MAX_KEY_PART_CHARS, cellPrefix, dayBucket } from "../../../../core/observe/analytics/keys.ts";
import type { RequestLog } from "../../../../core/observe/logs/log-record.ts";
import { openDatabase } from "../../../../core/platform/local/sqlite.ts";
import { SqliteCounters } from "../../../../core/platform/local/sqlite-counters.ts";
import { SqliteRecords } from "../../../../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../../../../core/platform/local/write-batcher.ts";

const NOW = Date.UTC(2025, 0, 15, 12);

function log(id: number, fields: Partial<RequestLog>): RequestLog {
  return {
    id: `log_${id}`,
    createdAt: new Date(NOW).toISOString(),
    traceId: `trace_${id}`,
    organisationId: "org_a",
    workspaceId: "ws_1",
    method: "POST",
    route: "/v1/chat/completions",
    path: "/v1/chat/completions",
    status: 200,
    provider: "openai",
    requestedModel: "gpt-4o",
    latencyMs: 20,
    ...fields,
  } as RequestLog;
}

const closers: Array<() => void> = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
  vi.restoreAllMocks();
});

function stores() {
  const db = openDatabase(":memory:");
  const writes = new WriteBatcher(db);
  closers.push(() => {
    writes.flush();
    db.close();
  });
  return { counters: new SqliteCounters(db, writes), records: new SqliteRecords(db, writes) };
}

describe("analytics keys of hostile values", () => {
  it("counts a model with a lone surrogate, and the other tenants' logs of the batch", async () => {
    // Before: encodeURIComponent threw a URIError and the whole batch (every tenant's logs) was lost.
    const plan = await countLogs(stores(), [
      log(1, { requestedModel: "bad\uD800model" }),
      log(2, { organisationId: "org_b", requestedModel: "gpt-4o", metadata: { team: "x\uDFFF" }, userId: "u\uD83D" }),
    ]);
    const day = dayBucket(NOW);
    const keys = [...plan.adds.keys()];
    const orgB = cellPrefix("org_b", day, { workspace: "ws_1", provider: "openai", model: "gpt-4o" });
    expect(keys.some((key) => key.startsWith(orgB))).toBe(true);
    expect(keys.some((key) => key.startsWith("an|org_a|") && key.includes("bad%EF%BF%BDmodel"))).toBe(true);
  });

  it("one log that cannot be counted is skipped, not the batch", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    const broken = log(1, {});
    Object.defineProperty(broken, "metadata", {
      get() {
        throw new Error("unreadable");
      },
    });
    const plan = await countLogs(stores(), [broken, log(2, { organisationId: "org_b" })]);
    expect([...plan.adds.keys()].some((key) => key.startsWith("an|org_b|"))).toBe(true);
    expect(errors).toHaveBeenCalled();
  });

  it("keeps keys bounded whatever the length of a value", () => {
    const prefix = cellPrefix("org_a", dayBucket(NOW), {
      workspace: "ws",
      provider: "p",
      model: "m".repeat(5_000_000),
    });
    expect(prefix.length).toBeLessThan(MAX_KEY_PART_CHARS + 100);
  });
});

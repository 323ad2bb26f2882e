import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RequestLog } from "../../../core/logs/log-record.ts";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";
import { openDatabase } from "../../../core/platform/local/sqlite.ts";
import { SqliteRecords } from "../../../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../../../core/platform/local/write-batcher.ts";
import { StoreUnavailableError } from "../../../core/store/ports.ts";
import { committed, tempDirs } from "../../helpers/sqlite-files.ts";

const temp = tempDirs("gateway-log-reader");
let stores: LocalStores | undefined;
afterEach(async () => {
  await stores?.close();
  stores = undefined;
  temp.removeAll();
});

const search = (organisationId: string) => ({
  organisationId,
  from: new Date(Date.now() - 86_400_000).toISOString(),
  to: new Date(Date.now() + 60_000).toISOString(),
  limit: 100,
});

const log = (i: number, createdAt = new Date(Date.now() - 60_000 + i).toISOString()): RequestLog => ({
  id: `log_${String(i).padStart(6, "0")}`,
  createdAt,
  traceId: `trace-${i}`,
  organisationId: "org_1",
  workspaceId: "ws_1",
  method: "POST",
  route: "/v1/chat/completions",
  path: "/v1/chat/completions",
  status: 200,
  requestedModel: i % 2 ? "odd" : "even",
  latencyMs: 1,
  source: "gateway",
});

describe("local log search", () => {
  it("runs on a reader thread started by the first search and ended after a while without one", async () => {
    stores = createLocalStores({
      dataDir: temp.make(),
      publicBaseUrl: "http://localhost",
      logReader: { idleMs: 50 },
    });
    await stores.logSink.write({ log: log(1), retentionDays: 30 });
    const reader = stores.logReader;
    expect(reader.running).toBe(false);
    expect((await stores.logSink.search(search("org_1"))).items.map((found) => found.id)).toEqual(["log_000001"]);
    expect(reader.running).toBe(true);
    await expect.poll(() => reader.running, { timeout: 2000 }).toBe(false);
    // The next search starts it again.
    expect((await stores.logSink.search(search("org_1"))).items).toHaveLength(1);
  });

  it("refuses searches past the queue bound as unavailable instead of queueing them without end", async () => {
    stores = createLocalStores({
      dataDir: temp.make(),
      publicBaseUrl: "http://localhost",
      logReader: { maxWaiting: 2 },
    });
    const searches = Array.from({ length: 4 }, () => stores!.logSink.search(search("org_1")));
    const settled = await Promise.allSettled(searches);
    expect(settled.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(2);
    for (const outcome of settled.filter((entry) => entry.status === "rejected")) {
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    }
  });

  it("indexes the logs an earlier version wrote, newest first, and never twice", async () => {
    const dir = temp.make();
    // logs.db as an earlier version left it: log records, no search index.
    const old = openDatabase(join(dir, "logs.db"));
    const oldRecords = new SqliteRecords(old, new WriteBatcher(old));
    const earlier = Array.from({ length: 450 }, (_, i) => log(i));
    await Promise.all(earlier.map((entry) => oldRecords.put({ pk: `LOG#${entry.id}`, sk: "LOG", ...entry })));
    old.close();

    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    const later = log(1000, new Date().toISOString());
    await stores.logSink.write({ log: later, retentionDays: 30 });
    await expect
      .poll(
        () => (committed(join(dir, "logs.db"), "SELECT value FROM log_index_state")[0] as { value: number }).value,
        {
          timeout: 10_000,
        },
      )
      .toBe(0);
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await stores.logSink.search({ ...search("org_1"), model: "odd", cursor });
      ids.push(...page.items.map((found) => found.id));
      cursor = page.cursor;
    } while (cursor);
    expect(ids).toEqual(
      earlier
        .filter((_, i) => i % 2 === 1)
        .map((entry) => entry.id)
        .reverse(),
    );
    expect(committed(join(dir, "logs.db"), "SELECT count(*) AS n FROM log_facts")).toEqual([{ n: 451 }]);
  });
});

import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { layoutLog } from "../../core/logs/log-layout.ts";
import type { RequestLog } from "../../core/logs/log-record.ts";
import { RequestLogger } from "../../core/logs/request-logger.ts";
import { recordRow } from "../../core/platform/mysql/mysql-records.ts";
import type { MysqlStores } from "../../core/platform/mysql/mysql-stores.ts";
import { type MariaDbServer, startMariaDb } from "../../scripts/mariadb.ts";
import { testMysqlStores } from "../helpers/mysql-stores.ts";

/**
 * The MySQL log sink when its log store (a MariaDB server of its own here, LOG_STORE_DATABASE_URL) hangs: writes
 * go on answering, the breaker opens after the threshold, logs wait on local disk and are all in the store once
 * it answers again; a full buffer drops (and counts) what does not fit; a buffer left at shutdown is replayed by
 * the next start.
 */

let logServer: MariaDbServer;
let serverDir: string;

beforeAll(async () => {
  serverDir = mkdtempSync(join(tmpdir(), "log-store-"));
  logServer = await startMariaDb({ dir: join(serverDir, "server"), bufferPoolMb: 32 });
});

afterAll(async () => {
  logServer?.resume();
  await logServer?.stop();
  rmSync(serverDir, { recursive: true, force: true });
});

const LOG_STORE = { threshold: 3, backoffMs: 1500, timeoutMs: 1000 };

async function storesWithLogServer(name: string, buffer: { dir: string; maxBytes: number }) {
  const logUrl = await logServer.createDatabase(`${name}_${randomUUID().replaceAll("-", "").slice(0, 8)}`);
  return testMysqlStores(name, {
    logDatabase: { url: logUrl, poolSize: 4 },
    logStore: LOG_STORE,
    logBuffer: buffer,
  });
}

const logger = (stores: MysqlStores) =>
  new RequestLogger(stores.logSink, stores.blobs, {
    retentionDays: 30,
    threshold: 5,
    backoffMs: 60_000,
    timeoutMs: 15_000,
  });

const newLog = (organisationId: string, bodySize = 100): RequestLog => ({
  id: `log_${randomUUID()}`,
  createdAt: new Date().toISOString(),
  traceId: randomUUID(),
  organisationId,
  workspaceId: "ws_1",
  method: "POST",
  route: "/v1/chat/completions",
  path: "/v1/chat/completions",
  status: 200,
  latencyMs: 5,
  source: "gateway",
  requestBody: { text: "x".repeat(bodySize) },
});

/** The ids a search of the organisation's logs finds, following its cursors. */
async function searchAll(stores: MysqlStores, organisationId: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let cursor: string | undefined;
  do {
    const page = await stores.logSink.search({
      organisationId,
      from: new Date(Date.now() - 86_400_000).toISOString(),
      to: new Date(Date.now() + 60_000).toISOString(),
      limit: 100,
      cursor,
    });
    for (const log of page.items) ids.add(log.id);
    cursor = page.cursor;
  } while (cursor);
  return ids;
}

async function countIn(stores: MysqlStores, ids: string[]): Promise<number> {
  let found = 0;
  for (const id of ids) if (await stores.logSink.records.get(`LOG#${id}`, "LOG")) found++;
  return found;
}

describe("MySQL log sink with its log store down", () => {
  it("keeps answering, opens the breaker, buffers on disk and replays everything once the store is back", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-buffer-"));
    const opened = await storesWithLogServer("outage", { dir, maxBytes: 64 * 1024 * 1024 });
    try {
      const { stores } = opened;
      const requests = logger(stores);
      const org = `org_${randomUUID()}`;
      const before = Array.from({ length: 20 }, () => newLog(org));
      expect(await Promise.all(before.map((log) => requests.write(log)))).toEqual(before.map(() => true));

      logServer.pause();
      const during: RequestLog[] = [];
      const slowest: number[] = [];
      let sawOpen = false;
      // 3 s of traffic, a batch every 100 ms, while the store hangs.
      for (let round = 0; round < 30; round++) {
        const batch = Array.from({ length: 10 }, () => newLog(org, round % 5 === 0 ? 20_000 : 100));
        during.push(...batch);
        const started = Date.now();
        expect(await Promise.all(batch.map((log) => requests.write(log)))).toEqual(batch.map(() => true));
        slowest.push(Date.now() - started);
        sawOpen ||= stores.logSink.breaker.open;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      // No write waited longer than half the call timeout (plus the disk): nothing reached the logger's breaker.
      expect(Math.max(...slowest)).toBeLessThan(LOG_STORE.timeoutMs);
      expect(requests.breaker.dropped).toBe(0);
      expect(sawOpen, "the breaker opened after the threshold").toBe(true);
      expect(stores.logSink.buffered).toBeGreaterThan(0);

      logServer.resume();
      await expect.poll(() => stores.logSink.buffered, { timeout: 20_000, interval: 200 }).toBe(0);
      expect(stores.logSink.breaker.open).toBe(false);
      const ids = [...before, ...during].map((log) => log.id);
      expect(await countIn(stores, ids)).toBe(ids.length);
      // Replayed with their search index rows: a search finds every one.
      expect(await searchAll(stores, org)).toEqual(new Set(ids));
      // A large body (its blob) came back with its log.
      const large = during[0]!;
      expect((await requests.get(large.id))?.requestBody).toEqual({ text: "x".repeat(20_000) });
      expect(stores.logSink.dropped).toBe(0);
    } finally {
      logServer.resume();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("drops and counts what does not fit in a full buffer, keeping what does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-buffer-"));
    const opened = await storesWithLogServer("full", { dir, maxBytes: 16 * 1024 });
    try {
      const { stores } = opened;
      const org = `org_${randomUUID()}`;
      logServer.pause();
      const logs = Array.from({ length: 60 }, () => newLog(org, 1000));
      const results = await Promise.allSettled(logs.map((log) => stores.logSink.write({ log, retentionDays: 1 })));
      const kept = results.filter((result) => result.status === "fulfilled").length;
      expect(kept).toBeGreaterThan(0);
      expect(kept).toBeLessThan(logs.length);
      expect(stores.logSink.dropped).toBe(logs.length - kept);
      expect(stores.logSink.buffered).toBeLessThanOrEqual(16 * 1024);
      logServer.resume();
      await expect.poll(() => stores.logSink.buffered, { timeout: 20_000, interval: 200 }).toBe(0);
      const stored = logs.filter((_, index) => results[index]!.status === "fulfilled").map((log) => log.id);
      expect(await countIn(stores, stored)).toBe(kept);
    } finally {
      logServer.resume();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("replays at the next start what was still buffered when the process stopped", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-buffer-"));
    const opened = await storesWithLogServer("restart", { dir, maxBytes: 64 * 1024 * 1024 });
    try {
      const org = `org_${randomUUID()}`;
      logServer.pause();
      const logs = Array.from({ length: 25 }, () => newLog(org));
      await Promise.all(logs.map((log) => opened.stores.logSink.write({ log, retentionDays: 1 })));
      await opened.stores.close();
      logServer.resume();
      const next = await opened.another();
      await expect.poll(() => next.logSink.buffered, { timeout: 20_000, interval: 200 }).toBe(0);
      expect(
        await countIn(
          next,
          logs.map((log) => log.id),
        ),
      ).toBe(logs.length);
    } finally {
      logServer.resume();
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("replays a log an earlier version buffered without search index rows, and then finds it by search", async () => {
    const dir = mkdtempSync(join(tmpdir(), "log-buffer-"));
    const org = `org_${randomUUID()}`;
    const log = { ...newLog(org), requestedModel: "buffered-model" };
    const { item } = layoutLog({ log, retentionDays: 1 });
    // A segment left by a process that is gone (its pid in the name), in the earlier format: the record's row only.
    writeFileSync(join(dir, `${Date.now()}-4194000-0badcafe.jsonl`), `${JSON.stringify({ row: recordRow(item) })}\n`);
    const opened = await storesWithLogServer("older", { dir, maxBytes: 64 * 1024 * 1024 });
    try {
      const { stores } = opened;
      await expect.poll(() => stores.logSink.buffered, { timeout: 20_000, interval: 200 }).toBe(0);
      expect(await searchAll(stores, org)).toEqual(new Set([log.id]));
      const byModel = await stores.logSink.search({
        organisationId: org,
        model: "buffered-model",
        from: new Date(Date.now() - 86_400_000).toISOString(),
        to: new Date(Date.now() + 60_000).toISOString(),
        limit: 10,
      });
      expect(byModel.items.map((found) => found.id)).toEqual([log.id]);
    } finally {
      await opened.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { RequestLog } from "../../core/logs/log-record.ts";
import type { LogSearch } from "../../core/logs/log-search.ts";
import type { RequestLogger } from "../../core/logs/request-logger.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * What every LogSink's `search` must do (core/logs/log-search.ts), whatever index the family keeps: exact
 * filters (workspace and organisation above all), newest first, keyset pages that neither repeat nor skip a
 * log, a bounded share of the index per call (a page may be short, even empty, and still have a cursor), and
 * no expired log.
 */
export function logSearchContract(getStores: () => Stores, newLogger: () => RequestLogger) {
  describe("search", () => {
    const HOUR = 3_600_000;
    const base = Date.now() - 2 * HOUR;
    const range = { from: new Date(base - HOUR).toISOString(), to: new Date(Date.now() + HOUR).toISOString() };

    /** Logs of a fresh organisation, the i-th created i seconds after `base` (so newest is last). */
    function fixture(count: number, shape: (i: number) => Partial<RequestLog>) {
      const organisationId = `org_${randomUUID()}`;
      const logs = Array.from(
        { length: count },
        (_, i): RequestLog => ({
          id: `log_${randomUUID()}`,
          createdAt: new Date(base + i * 1000).toISOString(),
          traceId: `trace-${randomUUID()}`,
          organisationId,
          method: "POST",
          route: "/v1/chat/completions",
          path: "/v1/chat/completions",
          status: 200,
          latencyMs: 5,
          requestBody: { model: "m", n: i },
          source: "gateway",
          ...shape(i),
        }),
      );
      return { organisationId, logs };
    }

    async function write(logger: RequestLogger, logs: RequestLog[]) {
      for (const log of logs) expect(await logger.write({ ...log }, 30, 100)).toBe(true);
    }

    /** Every page of a search, following cursors; the ids found, newest first, and how many calls it took. */
    async function searchAll(search: Omit<LogSearch, "limit" | "cursor"> & { limit?: number }) {
      const ids: string[] = [];
      let cursor: string | undefined;
      let calls = 0;
      do {
        const page = await getStores().logSink.search({ limit: 10, ...search, cursor });
        calls++;
        for (const log of page.items) {
          expect(log).not.toHaveProperty("requestBody");
          ids.push(log.id);
        }
        cursor = page.cursor;
      } while (cursor && calls < 200);
      return { ids, calls };
    }

    const newestFirst = (logs: RequestLog[]) => logs.map((log) => log.id).reverse();

    it("filters on every field it indexes, exactly, newest first, in its organisation and workspace only", async () => {
      const logger = newLogger();
      const { organisationId, logs } = fixture(12, (i) => ({
        workspaceId: i % 3 === 2 ? undefined : `ws_${i % 3}`,
        // One trace shared by a log of each workspace.
        traceId: i < 2 ? "shared-trace" : `trace-${i}`,
        apiKeyId: `key_${i % 2}`,
        userId: i % 4 === 0 ? "usr_a" : undefined,
        status: i % 5 === 0 ? 500 : 200,
        provider: i % 2 === 0 ? "openai" : "anthropic",
        requestedModel: i % 3 === 0 ? "gpt-4o" : "claude",
        answeredModel: i % 3 === 0 ? "gpt-4o-2024-08-06" : undefined,
        metadata: i % 2 === 0 ? { team: i % 4 === 0 ? "search" : "ads" } : undefined,
        cost: i / 100,
      }));
      await write(logger, logs);
      // Another organisation with the same workspace, key and field values: never part of the answers.
      const other = fixture(3, () => ({ workspaceId: "ws_0", traceId: "shared-trace", apiKeyId: "key_0" }));
      await write(logger, other.logs);

      const expectFound = async (search: Partial<LogSearch>, keep: (log: RequestLog, i: number) => boolean) => {
        const { ids } = await searchAll({ organisationId, ...range, ...search });
        expect(ids, JSON.stringify(search)).toEqual(newestFirst(logs.filter(keep)));
      };
      await expectFound({}, () => true);
      await expectFound({ workspaceId: "ws_0" }, (_, i) => i % 3 === 0);
      await expectFound({ traceId: "shared-trace" }, (_, i) => i < 2);
      await expectFound({ traceId: "shared-trace", workspaceId: "ws_1" }, (_, i) => i === 1);
      await expectFound({ apiKeyId: "key_1" }, (_, i) => i % 2 === 1);
      await expectFound({ userId: "usr_a" }, (_, i) => i % 4 === 0);
      await expectFound({ status: 500 }, (_, i) => i % 5 === 0);
      await expectFound({ provider: "anthropic" }, (_, i) => i % 2 === 1);
      await expectFound({ model: "claude" }, (_, i) => i % 3 !== 0);
      // Either model a log names: the requested one or the one that answered.
      await expectFound({ model: "gpt-4o" }, (_, i) => i % 3 === 0);
      await expectFound({ model: "gpt-4o-2024-08-06" }, (_, i) => i % 3 === 0);
      await expectFound({ metadataKey: "team" }, (_, i) => i % 2 === 0);
      await expectFound({ metadataKey: "team", metadataValue: "ads" }, (_, i) => i % 4 === 2);
      await expectFound({ minCost: 0.03, maxCost: 0.07 }, (_, i) => i >= 3 && i <= 7);
      await expectFound(
        { workspaceId: "ws_1", provider: "anthropic", status: 200 },
        (_, i) => i % 3 === 1 && i % 2 === 1 && i % 5 !== 0,
      );
      await expectFound(
        { workspaceId: "ws_0", model: "gpt-4o", metadataKey: "team", metadataValue: "search" },
        (_, i) => i % 12 === 0,
      );
      await expectFound({ from: logs[4]!.createdAt, to: logs[8]!.createdAt }, (_, i) => i >= 4 && i <= 8);
      await expectFound({ model: "nope" }, () => false);
      await expectFound({ workspaceId: "ws_unknown" }, () => false);
    });

    it("matches values with separators, other scripts and hundreds of characters exactly", async () => {
      const logger = newLogger();
      const long = "模型".repeat(300);
      const { organisationId, logs } = fixture(4, (i) => ({
        workspaceId: "ws/=#1",
        traceId: ["a/b", "a=b", "a%2Fb", "a/b "][i],
        requestedModel: i % 2 ? long : `${long}x`,
        metadata: { "k=1": i < 2 ? "v/=#" : long, [long]: "x" },
      }));
      await write(logger, logs);
      const found = async (search: Partial<LogSearch>) =>
        (await searchAll({ organisationId, ...range, ...search })).ids;
      expect(await found({ traceId: "a/b" })).toEqual([logs[0]!.id]);
      expect(await found({ traceId: "a=b", workspaceId: "ws/=#1" })).toEqual([logs[1]!.id]);
      expect(await found({ model: long })).toEqual(newestFirst([logs[1]!, logs[3]!]));
      expect(await found({ metadataKey: "k=1", metadataValue: "v/=#" })).toEqual(newestFirst(logs.slice(0, 2)));
      expect(await found({ metadataKey: "k=1", metadataValue: long })).toEqual(newestFirst(logs.slice(2)));
      expect(await found({ metadataKey: long, workspaceId: "ws/=#1" })).toEqual(newestFirst(logs));
      expect(await found({ metadataKey: "k", metadataValue: "1=v/=#" })).toEqual([]);
    });

    it("pages through a keyset cursor: no log twice, none missed, and later writes do not move the pages", async () => {
      const logger = newLogger();
      const { organisationId, logs } = fixture(7, () => ({ workspaceId: "ws_p", provider: "openai" }));
      await write(logger, logs);
      const search = { organisationId, ...range, workspaceId: "ws_p", provider: "openai", limit: 3 };
      const first = await getStores().logSink.search(search);
      expect(first.items.map((log) => log.id)).toEqual(newestFirst(logs).slice(0, 3));
      expect(first.cursor).toBeDefined();
      // A newer log arrives between pages: the next pages go on from where the first stopped.
      const newer = { organisationId, workspaceId: "ws_p", provider: "openai", createdAt: new Date().toISOString() };
      await write(logger, fixture(1, () => newer).logs);
      const second = await getStores().logSink.search({ ...search, cursor: first.cursor });
      const third = await getStores().logSink.search({ ...search, cursor: second.cursor });
      expect([...second.items, ...third.items].map((log) => log.id)).toEqual(newestFirst(logs).slice(3));
      const after = third.cursor ? await getStores().logSink.search({ ...search, cursor: third.cursor }) : undefined;
      expect(after?.items ?? []).toEqual([]);
      expect(after?.cursor).toBeUndefined();
    });

    it("reads a bounded share of the index per call: short or empty pages with a cursor, until every match is found", async () => {
      const logger = newLogger();
      // Cost bounds are checked on the entries read: only the oldest log matches, behind nine that do not.
      const { organisationId, logs } = fixture(10, (i) => ({ workspaceId: "ws_b", cost: i === 0 ? 1 : 0 }));
      await write(logger, logs);
      const search = { organisationId, ...range, minCost: 0.5, limit: 10, maxExamined: 3 };
      const first = await getStores().logSink.search(search);
      expect(first.items).toEqual([]);
      expect(first.cursor).toBeDefined();
      const { ids, calls } = await searchAll(search);
      expect(ids).toEqual([logs[0]!.id]);
      expect(calls).toBeGreaterThanOrEqual(4);
    });

    it("refuses a cursor it did not make", async () => {
      const search = { organisationId: `org_${randomUUID()}`, ...range, limit: 5 };
      for (const cursor of ["@@", Buffer.from('{"after":7}').toString("base64url"), "bm90IGpzb24"]) {
        await expect(getStores().logSink.search({ ...search, cursor })).rejects.toBeInstanceOf(RangeError);
      }
    });

    it("finds no expired log", async () => {
      const logger = newLogger();
      const { organisationId, logs } = fixture(2, (i) => ({
        workspaceId: "ws_e",
        createdAt: new Date(Date.now() - (i === 0 ? 3 : 0.5) * 86_400_000).toISOString(),
      }));
      for (const log of logs) expect(await logger.write({ ...log }, 1, 100)).toBe(true);
      const { ids } = await searchAll({
        organisationId,
        from: new Date(Date.now() - 5 * 86_400_000).toISOString(),
        to: new Date().toISOString(),
        workspaceId: "ws_e",
      });
      expect(ids).toEqual([logs[1]!.id]);
    });
  });
}

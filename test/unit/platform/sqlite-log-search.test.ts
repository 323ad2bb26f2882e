import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { LogSearch } from "../../../core/logs/log-search.ts";
import { openDatabase } from "../../../core/platform/local/sqlite.ts";
import { SqliteLogIndex } from "../../../core/platform/local/sqlite-log-index.ts";
import { SqliteLogSearch } from "../../../core/platform/local/sqlite-log-search.ts";
import { SqliteRecords } from "../../../core/platform/local/sqlite-records.ts";
import { WriteBatcher } from "../../../core/platform/local/write-batcher.ts";
import { tempDirs } from "../../helpers/sqlite-files.ts";

const temp = tempDirs("gateway-log-search");
afterEach(() => temp.removeAll());

describe("SqliteLogSearch", () => {
  it("reads every filter through an index, in index order: no table scan, no sort", async () => {
    const db = openDatabase(join(temp.make(), "logs.db"));
    const writes = new WriteBatcher(db);
    new SqliteRecords(db, writes);
    const index = new SqliteLogIndex(db, writes);
    index.add(
      {
        id: "log_1",
        createdAt: new Date().toISOString(),
        organisationId: "org_1",
        workspaceId: "ws_1",
        traceId: "t",
        apiKeyId: "key_1",
        userId: "usr_1",
        status: 200,
        provider: "openai",
        requestedModel: "m",
        answeredModel: "m-1",
        metadata: { k: "v" },
      },
      undefined,
    );
    writes.flush();
    const statements: string[] = [];
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      statements.push(sql);
      return prepare(sql);
    }) as typeof db.prepare;
    const search = new SqliteLogSearch(db);
    const base: LogSearch = {
      organisationId: "org_1",
      from: new Date(0).toISOString(),
      to: new Date(Date.now() + 1000).toISOString(),
      limit: 10,
    };
    const filters: Array<Partial<LogSearch>> = [
      {},
      { workspaceId: "ws_1" },
      { traceId: "t" },
      { apiKeyId: "key_1" },
      { userId: "usr_1" },
      { status: 200 },
      { workspaceId: "ws_1", status: 200 },
      { provider: "openai" },
      { workspaceId: "ws_1", provider: "openai" },
      { model: "m" },
      { workspaceId: "ws_1", model: "m-1" },
      { metadataKey: "k" },
      { metadataKey: "k", metadataValue: "v" },
    ];
    for (const filter of filters) expect((await search.search({ ...base, ...filter })).items).toHaveLength(0);
    const reads = statements.filter((sql) => /log_facts|log_metadata/.test(sql));
    expect(reads.length).toBeGreaterThanOrEqual(12);
    for (const sql of reads) {
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(
          ...sql
            .split("?")
            .slice(1)
            .map(() => 1),
        ) as Array<{
          detail: string;
        }>
      ).map((step) => step.detail);
      // The model filter merges two LIMIT-ed subqueries: sorting their output sorts at most a batch of rows.
      const steps = plan.join("; ").replace(/SCAN \(subquery-\d+\); USE TEMP B-TREE FOR ORDER BY/g, "");
      expect(steps, sql).not.toMatch(/TEMP B-TREE|SCAN (log_facts|m|f)\b(?! USING)/);
      expect(steps, sql).toMatch(/USING (COVERING )?INDEX|USING PRIMARY KEY/);
    }
    db.close();
  });
});

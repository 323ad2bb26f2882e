import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type SqliteDatabase } from "../../core/platform/local/sqlite.ts";
import { SqliteVectorIndex, type SqliteVectorIndexOptions } from "../../core/platform/local/sqlite-vector-index.ts";
import { WriteBatcher } from "../../core/platform/local/write-batcher.ts";
import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import { seededVector, vectorIndexContract } from "./vector-index.contract.ts";

const HOUR = 3_600_000;
const LIMITS = { maxEntries: 100_000, maxEntriesPerScope: 100_000 };

/** A vector index on its own database file, opened and closed like the local stores do. */
class OpenIndex {
  readonly db: SqliteDatabase;
  readonly writes: WriteBatcher;
  readonly index: SqliteVectorIndex;
  constructor(file: string, options: SqliteVectorIndexOptions = LIMITS) {
    this.db = openDatabase(file);
    this.writes = new WriteBatcher(this.db);
    this.index = new SqliteVectorIndex(this.db, this.writes, options);
  }
  rows(scope?: string): number {
    const sql = "SELECT COUNT(*) AS n FROM cache_vectors";
    const row = scope ? this.db.prepare(`${sql} WHERE scope = ?`).get(scope) : this.db.prepare(sql).get();
    return (row as { n: number }).n;
  }
  close(): void {
    this.index.close();
    this.writes.flush();
    this.db.close();
  }
}

let dir: string;
let shared: OpenIndex;
const opened: OpenIndex[] = [];
const open = (name: string, options?: SqliteVectorIndexOptions) => {
  const index = new OpenIndex(join(dir, `${name}.db`), options);
  opened.push(index);
  return index;
};

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "vector-index-"));
  shared = new OpenIndex(join(dir, "shared.db"));
});

afterEach(() => {
  for (const index of opened.splice(0)) index.close();
});

afterAll(() => {
  shared.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("local vector index (SQLite + usearch)", () => {
  vectorIndexContract(() => shared.index);

  describe("local specifics", () => {
    it("keeps entries across restarts", async () => {
      const first = open("restart");
      await first.index.add("scope", "kept", seededVector(8, 1), Date.now() + HOUR);
      first.close();
      opened.pop();
      const second = open("restart");
      expect((await second.index.nearest("scope", seededVector(8, 1), 0.99))?.id).toBe("kept");
    });

    it("deletes an expired entry from the table when a query meets it", async () => {
      const { index, rows } = bind(open("expiry"));
      await index.add("scope", "short", seededVector(8, 2), Date.now() + 100);
      expect(await index.nearest("scope", seededVector(8, 2), 0.5)).toBeDefined();
      await sleep(200);
      expect(await index.nearest("scope", seededVector(8, 2), 0.5)).toBeUndefined();
      expect(rows()).toBe(0);
    });

    it("sweeps expired entries of other scopes as entries are added", async () => {
      const { index, rows } = bind(open("sweep"));
      for (let i = 0; i < 5; i++) await index.add(`idle-${i}`, "e", seededVector(4, i + 1), Date.now() + 50);
      await sleep(100);
      await index.add("busy", "e", seededVector(4, 9), Date.now() + HOUR);
      expect(rows()).toBe(1);
    });

    it("holds at most maxEntriesPerScope entries per scope, removing the oldest", async () => {
      const { index, rows } = bind(open("per-scope", { maxEntries: 100, maxEntriesPerScope: 3 }));
      for (let i = 0; i < 5; i++) await index.add("scope", `e${i}`, seededVector(8, 10 + i), Date.now() + HOUR);
      await index.add("other", "e0", seededVector(8, 10), Date.now() + HOUR);
      expect(rows("scope")).toBe(3);
      expect(await index.nearest("scope", seededVector(8, 10), 0.99)).toBeUndefined();
      expect(await index.nearest("scope", seededVector(8, 11), 0.99)).toBeUndefined();
      expect((await index.nearest("scope", seededVector(8, 14), 0.99))?.id).toBe("e4");
      expect((await index.nearest("other", seededVector(8, 10), 0.99))?.id).toBe("e0");
    });

    it("holds at most maxEntries in all, removing the oldest of any scope (in memory too)", async () => {
      const { index, rows } = bind(open("total", { maxEntries: 4, maxEntriesPerScope: 100 }));
      await index.add("old", "e", seededVector(8, 20), Date.now() + HOUR);
      // Loaded into memory before it is evicted: the eviction must take it out of the graph as well.
      expect(await index.nearest("old", seededVector(8, 20), 0.99)).toBeDefined();
      for (let i = 0; i < 4; i++) await index.add(`new-${i}`, "e", seededVector(8, 21 + i), Date.now() + HOUR);
      expect(rows()).toBe(4);
      expect(await index.nearest("old", seededVector(8, 20), -1)).toBeUndefined();
      expect(index.loadedEntries("old")).toBe(0);
    });

    it("loads a large scope in slices that yield to the event loop, newest entries first", async () => {
      const writer = open("slices");
      const count = 3000;
      // Added in order (seq follows the index), all in one write batch.
      await Promise.all(
        Array.from({ length: count }, (_, i) =>
          writer.index.add("big", `e${i}`, seededVector(8, 5000 + i), Date.now() + HOUR),
        ),
      );
      writer.close();
      opened.pop();

      const { index } = bind(open("slices", { ...LIMITS, loadSliceMs: 1 }));
      let ticks = 0;
      const ticker = setInterval(() => ticks++, 0);
      // The first query answers from the first slice: the newest entry is there, the oldest not yet.
      expect((await index.nearest("big", seededVector(8, 5000 + count - 1), 0.999))?.id).toBe(`e${count - 1}`);
      expect(index.loadedEntries("big")).toBeLessThan(count);
      while (index.loadedEntries("big") < count) await sleep(5);
      clearInterval(ticker);
      expect(ticks, "timers ran while the scope loaded").toBeGreaterThan(1);
      expect((await index.nearest("big", seededVector(8, 5000), 0.999))?.id).toBe("e0");
    });

    it("is part of the local stores (stores.vectors), persisted in gateway.db", async () => {
      const dataDir = mkdtempSync(join(tmpdir(), "vector-stores-"));
      try {
        let stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
        await stores.vectors.add("scope", "entry", seededVector(4, 3), Date.now() + HOUR);
        await stores.close();
        stores = createLocalStores({ dataDir, publicBaseUrl: "http://localhost" });
        expect((await stores.vectors.nearest("scope", seededVector(4, 3), 0.99))?.id).toBe("entry");
        await stores.close();
      } finally {
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  });
});

function bind(opened: OpenIndex) {
  return { index: opened.index, rows: (scope?: string) => opened.rows(scope) };
}

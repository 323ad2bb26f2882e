import { committed, tempDirs } from "../../helpers/sqlite-files.ts";
import { execFileSync } from "node:child_process";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";
import { openDatabase } from "../../../core/platform/local/sqlite.ts";
import { StorageThread } from "../../../core/platform/local/storage-thread.ts";
import { checkpointLoopOptions } from "../../../core/platform/local/wal-checkpointer.ts";
import { WriteBatcher } from "../../../core/platform/local/write-batcher.ts";
import { StoreUnavailableError } from "../../../core/store/ports.ts";

const temp = tempDirs("gateway-writes");
const tempDir = () => temp.make();
afterEach(() => {
  temp.removeAll();
});

/** A fresh database with one table `t (v <column>)`, its write batcher and an insert statement. */
const batchedTable = (column: string) => {
  const file = join(tempDir(), "batch.db");
  const db = openDatabase(file);
  db.exec(`CREATE TABLE t (v ${column})`);
  return { file, db, batcher: new WriteBatcher(db), insert: db.prepare("INSERT INTO t (v) VALUES (?)") };
};

describe("local write batching", () => {
  it("runs writes at once, commits them together within milliseconds and resolves after the commit", async () => {
    const { file, db, batcher, insert } = batchedTable("INTEGER");
    const writes = [1, 2, 3].map((v) => batcher.run("t.insert", () => insert.run(v).changes));
    // Visible to this connection at once, not yet to another one.
    expect(db.prepare("SELECT count(*) AS n FROM t").get()).toEqual({ n: 3 });
    expect(committed(file, "SELECT count(*) AS n FROM t")).toEqual([{ n: 0 }]);
    expect(await Promise.all(writes)).toEqual([1, 1, 1]);
    expect(committed(file, "SELECT count(*) AS n FROM t")).toEqual([{ n: 3 }]);
    db.close();
  });

  it("fails one write alone (its error is its own) and keeps the others of the batch", async () => {
    const { file, db, batcher, insert } = batchedTable("INTEGER UNIQUE");
    const first = batcher.run("t.insert", () => insert.run(1));
    const duplicate = batcher.run("t.insert", () => insert.run(1));
    const second = batcher.run("t.insert", () => insert.run(2));
    await expect(duplicate).rejects.toThrow(/UNIQUE/);
    await Promise.all([first, second]);
    expect(committed(file, "SELECT v FROM t ORDER BY v")).toEqual([{ v: 1 }, { v: 2 }]);
    db.close();
  });

  it("rejects the writes of a batch SQLite rolled back by itself, and starts a new batch for the next ones", async () => {
    const { file, db, batcher, insert } = batchedTable("INTEGER");
    const lost = batcher.run("t.insert", () => insert.run(1));
    // Stands in for an I/O fault: the transaction is gone under the batcher's feet.
    db.exec("ROLLBACK");
    const kept = batcher.run("t.insert", () => insert.run(2));
    await expect(lost).rejects.toBeInstanceOf(StoreUnavailableError);
    await kept;
    expect(committed(file, "SELECT v FROM t")).toEqual([{ v: 2 }]);
    db.close();
  });

  it("answers 503 (StoreUnavailableError) for writes to a closed database", async () => {
    const db = openDatabase(join(tempDir(), "closed.db"));
    const batcher = new WriteBatcher(db);
    db.close();
    await expect(batcher.run("t.insert", () => 1)).rejects.toBeInstanceOf(StoreUnavailableError);
  });
});

describe("local stores under load", () => {
  let stores: LocalStores | undefined;
  afterEach(async () => {
    await stores?.close();
    stores = undefined;
  });

  it("writes counters through to the table once per commit, with their latest value and expiry", async () => {
    const dir = tempDir();
    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    const expiresAt = Math.floor(Date.now() / 1000) + 3600;
    const results = await Promise.all(
      Array.from({ length: 50 }, () => stores!.counters.add("hot", 1, { ceiling: 40, expiresAt })),
    );
    expect(results.filter((result) => result.admitted)).toHaveLength(40);
    await stores.records.put({ pk: "sync", sk: "sync" }); // resolves after the next commit
    expect(committed(join(dir, "gateway.db"), "SELECT value, expires_at FROM counters WHERE key = 'hot'")).toEqual([
      { value: 40, expires_at: expiresAt },
    ]);
  });

  it("answers queue writes after their commit, like every other write", async () => {
    const dir = tempDir();
    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    // A batch is open (a counter add answers at once); a send made now must not answer before it commits.
    await stores.counters.add("open-a-batch", 1);
    await stores.queue.send("exports", { job: 1 });
    expect(committed(join(dir, "gateway.db"), "SELECT count(*) AS n FROM queue_messages")).toEqual([{ n: 1 }]);
  });

  it("checkpoints the WAL from its own thread (a short WAL is never checkpointed by the main connection)", async () => {
    const dir = tempDir();
    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    await Promise.all(
      Array.from({ length: 300 }, (_, i) => stores!.records.put({ pk: `p${i}`, sk: "s", text: "x".repeat(2000) })),
    );
    const file = join(dir, "gateway.db");
    // Pages reach the database file only through checkpoints; nobody else runs one here.
    await expect.poll(() => statSync(file).size, { timeout: 5000 }).toBeGreaterThan(600_000);
    expect(committed(file, "SELECT count(*) AS n FROM records WHERE pk LIKE 'p%'")).toEqual([{ n: 300 }]);
  });

  it("keeps the WAL short under writes that never pause (the main connection lets it start over)", async () => {
    const dir = tempDir();
    stores = createLocalStores({
      dataDir: dir,
      publicBaseUrl: "http://localhost",
      wal: { intervalMs: 20, restartPages: 200 },
    });
    const wal = join(dir, "gateway.db-wal");
    let largest = 0;
    let written = 0;
    const pending: Array<Promise<void>> = [];
    // A write every millisecond or two for two seconds: a batch transaction is open nearly all the time.
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      for (let i = 0; i < 4; i++)
        pending.push(stores.records.put({ pk: `w${written++}`, sk: "s", text: "x".repeat(2000) }));
      largest = Math.max(largest, statSync(wal, { throwIfNoEntry: false })?.size ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
    // Without the restart the WAL holds every page written: at least a 4 KiB page per 2 KB record. With it, the
    // WAL stays near the restart length (200 pages) whatever the write rate: a quarter of the first is lenient.
    expect(written * 2000).toBeGreaterThan(2_000_000);
    expect(largest).toBeLessThan(written * 1024);
    expect(committed(join(dir, "gateway.db"), "SELECT count(*) AS n FROM records WHERE pk LIKE 'w%'")).toEqual([
      { n: written },
    ]);
  });

  it("closes in a process with nothing else to wait for (the storage thread's answer is awaited)", () => {
    const dir = tempDir();
    const module = new URL("../../../core/platform/local/local-stores.ts", import.meta.url).href;
    const script = `
      import { createLocalStores } from ${JSON.stringify(module)};
      const stores = createLocalStores({ dataDir: ${JSON.stringify(dir)}, publicBaseUrl: "http://localhost" });
      await stores.records.put({ pk: "a", sk: "b" });
      await stores.close();
      console.log("closed");`;
    // An await the event loop cannot finish exits with code 13 (and no "closed").
    const output = execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    expect(output.trim()).toBe("closed");
  });

  it("closes a storage thread that has already exited at once (a second close does not wait)", async () => {
    const db = openDatabase(join(tempDir(), "checkpoint.db"));
    const thread = new StorageThread({ checkpoint: checkpointLoopOptions(db, { intervalMs: 10 }) });
    await thread.close();
    const again = await Promise.race([
      thread.close().then(() => "closed"),
      new Promise((resolve) => setTimeout(() => resolve("hung"), 2000)),
    ]);
    expect(again).toBe("closed");
    db.close();
  });
});

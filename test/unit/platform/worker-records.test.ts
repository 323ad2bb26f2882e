import { committed, tempDirs } from "../../helpers/sqlite-files.ts";
import { statSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createLocalStores, type LocalStores } from "../../../core/platform/local/local-stores.ts";
import type { RecordWritesMessage } from "../../../core/platform/local/record-write-protocol.ts";
import { openDatabase } from "../../../core/platform/local/sqlite.ts";
import { SqliteLogIndex } from "../../../core/platform/local/sqlite-log-index.ts";
import { SqliteRecords } from "../../../core/platform/local/sqlite-records.ts";
import type { StorageThread } from "../../../core/platform/local/storage-thread.ts";
import { WorkerRecords } from "../../../core/platform/local/worker-records.ts";
import { WriteBatcher } from "../../../core/platform/local/write-batcher.ts";
import { ConditionFailedError, StoreUnavailableError } from "../../../core/store/ports.ts";

const temp = tempDirs("gateway-logs");
const tempDir = () => temp.make();
let stores: LocalStores | undefined;
afterEach(async () => {
  await stores?.close();
  stores = undefined;
  temp.removeAll();
});

const logItem = (id: string) => ({
  pk: `LOG#${id}`,
  sk: "LOG",
  gsi1pk: "LOGS#org#2026-11-23",
  gsi1sk: `2026-11-23T00:00:00.000Z#${id}`,
  status: 200,
});

describe("request-log records written by the storage thread", () => {
  it("keeps logs in logs.db, committed when the write resolves, and nothing of them in gateway.db", async () => {
    const dir = tempDir();
    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    await Promise.all([stores.logSink.records.put(logItem("a")), stores.logSink.records.put(logItem("b"))]);
    expect(committed(join(dir, "logs.db"), "SELECT pk FROM records ORDER BY pk")).toEqual([
      { pk: "LOG#a" },
      { pk: "LOG#b" },
    ]);
    expect(committed(join(dir, "gateway.db"), "SELECT count(*) AS n FROM records WHERE pk LIKE 'LOG#%'")).toEqual([
      { n: 0 },
    ]);
    // Conditions are checked by the thread and fail as on this thread.
    await expect(stores.logSink.records.put(logItem("a"), { exists: false })).rejects.toBeInstanceOf(
      ConditionFailedError,
    );
    await expect(stores.logSink.records.put({ pk: "", sk: "x" })).rejects.toBeInstanceOf(RangeError);
  });

  it("moves the logs an earlier version kept in gateway.db into logs.db when the stores open", async () => {
    const dir = tempDir();
    const old = openDatabase(join(dir, "gateway.db"));
    const oldRecords = new SqliteRecords(old, new WriteBatcher(old));
    await Promise.all([oldRecords.put(logItem("old")), oldRecords.put({ pk: "ORG#1", sk: "ORG", name: "kept" })]);
    old.close();

    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    expect(await stores.logSink.records.get("LOG#old", "LOG")).toMatchObject({ status: 200 });
    expect(await stores.records.get("LOG#old", "LOG")).toBeUndefined();
    expect(await stores.records.get("ORG#1", "ORG")).toMatchObject({ name: "kept" });
    const page = await stores.logSink.records.query({ partition: "LOGS#org#2026-11-23", index: "gsi1" });
    expect(page.items.map((item) => item.pk)).toEqual(["LOG#old"]);
  });

  it("keeps the copy already in logs.db when a log is in both files (a move cut short by a crash)", async () => {
    const dir = tempDir();
    const old = openDatabase(join(dir, "gateway.db"));
    const oldRecords = new SqliteRecords(old, new WriteBatcher(old));
    await oldRecords.put({ ...logItem("both"), status: 500 });
    old.close();
    const logs = openDatabase(join(dir, "logs.db"));
    const logRecords = new SqliteRecords(logs, new WriteBatcher(logs));
    await logRecords.put({ ...logItem("both"), status: 200 });
    logs.close();

    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    expect(await stores.logSink.records.get("LOG#both", "LOG")).toMatchObject({ status: 200 });
    expect(committed(join(dir, "gateway.db"), "SELECT count(*) AS n FROM records")).toEqual([{ n: 0 }]);
  });

  it("keeps the log WAL short under writes that never pause", async () => {
    const dir = tempDir();
    stores = createLocalStores({ dataDir: dir, publicBaseUrl: "http://localhost" });
    const wal = join(dir, "logs.db-wal");
    let largest = 0;
    let written = 0;
    const pending: Array<Promise<void>> = [];
    const until = Date.now() + 2000;
    while (Date.now() < until) {
      for (let i = 0; i < 8; i++)
        pending.push(stores.logSink.records.put({ ...logItem(`w${written++}`), text: "x".repeat(2000) }));
      largest = Math.max(largest, statSync(wal, { throwIfNoEntry: false })?.size ?? 0);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await Promise.all(pending);
    // SQLite's own checkpoints (1000 pages) run in the thread's commits and let the WAL start over.
    expect(written * 2000).toBeGreaterThan(8_000_000);
    expect(largest).toBeLessThan(6 * 1024 * 1024);
    expect(committed(join(dir, "logs.db"), "SELECT count(*) AS n FROM records")).toEqual([{ n: written }]);
  });
});

/** A stand-in for the storage thread: records what is posted, answers when told, can stop. */
function fakeThread() {
  const posted: RecordWritesMessage[] = [];
  const handlers = new Map<string, (message: any) => void>();
  const exits: Array<(expected: boolean) => void> = [];
  let exited = false;
  let closing = false;
  let holds = 0;
  let exit: () => void = () => {};
  const whenExited = new Promise<void>((resolve) => {
    exit = resolve;
  });
  const thread = {
    get exited() {
      return exited;
    },
    get closing() {
      return closing;
    },
    whenExited: () => whenExited,
    on: (kind: string, handler: (message: any) => void) => handlers.set(kind, handler),
    onExit: (handler: (expected: boolean) => void) => exits.push(handler),
    post: (message: RecordWritesMessage) => posted.push(message),
    hold: () => holds++,
    release: () => holds--,
  };
  return {
    thread: thread as unknown as StorageThread,
    posted,
    holds: () => holds,
    answer: (results: unknown[]) => handlers.get("records")?.({ kind: "records", results }),
    close() {
      closing = true;
    },
    exit() {
      exited = true;
      for (const handler of exits) handler(closing);
      exit();
    },
  };
}

describe("WorkerRecords", () => {
  /** The main thread's connection: its records and log index (writes made here once the thread is gone). */
  const localRecords = (): [SqliteRecords, SqliteLogIndex] => {
    const db = openDatabase(join(tempDir(), "logs.db"));
    const writes = new WriteBatcher(db);
    return [new SqliteRecords(db, writes), new SqliteLogIndex(db, writes)];
  };

  it("sends the writes of a few milliseconds in one message and holds the thread until they are answered", async () => {
    const fake = fakeThread();
    const records = new WorkerRecords(...localRecords(), fake.thread);
    const writes = [records.put(logItem("1")), records.put(logItem("2")), records.delete("LOG#3", "LOG")];
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(fake.posted).toHaveLength(1);
    expect(fake.posted[0]!.ops.map((op) => op.op)).toEqual(["put", "put", "delete"]);
    expect(fake.holds()).toBe(1);
    const [one, two, three] = fake.posted[0]!.ops.map((op) => op.id);
    fake.answer([
      { id: one, ok: true },
      { id: two, ok: false, error: { name: "ConditionFailedError", message: "condition failed" } },
    ]);
    fake.answer([{ id: three, ok: false, error: { name: "StoreUnavailableError", message: "busy" } }]);
    const settled = await Promise.allSettled(writes);
    expect(settled[0]).toEqual({ status: "fulfilled", value: undefined });
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConditionFailedError);
    expect((settled[2] as PromiseRejectedResult).reason).toBeInstanceOf(StoreUnavailableError);
    expect(fake.holds()).toBe(0);
  });

  it("fails the writes the thread had when it stops, and makes the unsent and later ones on this thread", async () => {
    const fake = fakeThread();
    const records = new WorkerRecords(...localRecords(), fake.thread);
    const sent = records.put(logItem("lost"));
    await new Promise((resolve) => setTimeout(resolve, 30));
    const unsent = records.put(logItem("unsent"));
    fake.exit();
    await expect(sent).rejects.toBeInstanceOf(StoreUnavailableError);
    await unsent;
    await records.put(logItem("after"));
    expect(await records.get("LOG#unsent", "LOG")).toMatchObject({ status: 200 });
    expect(await records.get("LOG#after", "LOG")).toMatchObject({ status: 200 });
    expect(await records.get("LOG#lost", "LOG")).toBeUndefined();
    expect(fake.posted).toHaveLength(1);
    expect(fake.holds()).toBe(0);
  });

  it("makes the writes issued while the thread closes on this thread once it has exited", async () => {
    const fake = fakeThread();
    const records = new WorkerRecords(...localRecords(), fake.thread);
    fake.close();
    let done = false;
    const write = records.put(logItem("closing")).then(() => {
      done = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(done).toBe(false);
    expect(fake.posted).toHaveLength(0);
    fake.exit();
    await write;
    expect(await records.get("LOG#closing", "LOG")).toMatchObject({ status: 200 });
  });

  it("refuses writes (unavailable) while too many wait for a thread that fell behind", async () => {
    const fake = fakeThread();
    const records = new WorkerRecords(...localRecords(), fake.thread);
    const waiting = Array.from({ length: 2048 }, (_, i) => records.put(logItem(`w${i}`)));
    await expect(records.put(logItem("one-too-many"))).rejects.toBeInstanceOf(StoreUnavailableError);
    await new Promise((resolve) => setTimeout(resolve, 30));
    fake.answer(fake.posted.flatMap((message) => message.ops.map((op) => ({ id: op.id, ok: true }))));
    await Promise.all(waiting);
    // Answered, they make room again: the next write is queued for the thread, not refused.
    expect(fake.holds()).toBe(0);
    void records.put(logItem("accepted-again"));
    expect(fake.holds()).toBe(1);
  });
});

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import mysql from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Database, parseDatabaseUrl } from "../../core/platform/mysql/database.ts";
import type { MysqlStores } from "../../core/platform/mysql/mysql-stores.ts";
import { MIGRATIONS, migrate, SCHEMA_VERSION } from "../../core/platform/mysql/schema.ts";
import { ConditionFailedError, StoreUnavailableError } from "../../core/store/ports.ts";
import type { ScheduledTask } from "../../core/workers/scheduled-task.ts";
import { type TestMysqlStores, testDatabaseUrl, testMysqlStores } from "../helpers/mysql-stores.ts";
import { sharedMariaDb } from "../setup/mariadb.ts";
import { seededVector } from "./vector-index.contract.ts";

/**
 * What several gateway processes on one database rely on, with two store instances standing for two processes
 * (each its own pools, leases, vector graphs): exact counters, one creator, each message to one receiver, vector
 * entries seen by both at once, one runner per scheduled tick. Then the schema's versions, TLS to the database
 * and what a closed or unreachable database answers.
 */

let opened: TestMysqlStores;
let a: MysqlStores;
let b: MysqlStores;

beforeAll(async () => {
  opened = await testMysqlStores("processes");
  a = opened.stores;
  b = await opened.another();
});

afterAll(async () => {
  await opened?.close();
});

const HOUR = 3_600_000;

describe("two processes on one MariaDB database", () => {
  it("admit exactly up to a counter's ceiling under 400 concurrent adds split between them", async () => {
    const key = `race:${randomUUID()}`;
    const results = await Promise.all(
      Array.from({ length: 400 }, (_, i) => (i % 2 ? a : b).counters.add(key, 1, { ceiling: 100 })),
    );
    expect(results.filter((result) => result.admitted)).toHaveLength(100);
    expect(await a.counters.get(key)).toBe(100);
    expect(await b.counters.get(key)).toBe(100);
  });

  it("let exactly one of 20 concurrent creators split between them create a record", async () => {
    const pk = `create#${randomUUID()}`;
    const results = await Promise.allSettled(
      Array.from({ length: 20 }, (_, who) => (who % 2 ? a : b).records.put({ pk, sk: "x", who }, { exists: false })),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    for (const result of results) {
      if (result.status === "rejected") expect(result.reason).toBeInstanceOf(ConditionFailedError);
    }
  });

  it("hand each queued message to one receiver while both poll at once", async () => {
    const queue = `shared-${randomUUID()}`;
    const ids = await a.queue.sendBatch(
      queue,
      Array.from({ length: 60 }, (_, i) => ({ i })),
    );
    const received: string[] = [];
    const poll = async (stores: MysqlStores) => {
      for (let round = 0; round < 40 && received.length < ids.length; round++) {
        const messages = await stores.queue.receive(queue, { max: 10, visibilityTimeoutSeconds: 60 });
        for (const message of messages) {
          received.push(message.id);
          await stores.queue.ack(queue, message.receipt);
        }
      }
    };
    await Promise.all([poll(a), poll(b), poll(a), poll(b)]);
    expect(received).toHaveLength(60);
    expect(new Set(received)).toEqual(new Set(ids));
  });

  it("see each other's semantic-cache vectors at once: added, replaced and removed", async () => {
    const scope = `scope:${randomUUID()}`;
    await a.vectors.add(scope, "first", seededVector(8, 1), Date.now() + HOUR);
    // b loads the scope now, so what follows must reach its in-memory graph through the table.
    expect((await b.vectors.nearest(scope, seededVector(8, 1), 0.99))?.id).toBe("first");
    await a.vectors.add(scope, "second", seededVector(8, 2), Date.now() + HOUR);
    expect((await b.vectors.nearest(scope, seededVector(8, 2), 0.99))?.id).toBe("second");
    await a.vectors.add(scope, "first", seededVector(8, 3), Date.now() + HOUR);
    expect(await b.vectors.nearest(scope, seededVector(8, 1), 0.99)).toBeUndefined();
    expect((await b.vectors.nearest(scope, seededVector(8, 3), 0.99))?.id).toBe("first");
    await a.vectors.remove(scope, "second");
    expect(await b.vectors.nearest(scope, seededVector(8, 2), 0.99)).toBeUndefined();
    expect(b.vectors.loadedEntries(scope)).toBe(1);
  });

  it("run each tick of a claimed scheduled task in one of them, and the other once the lease lapses", async () => {
    const runs: string[] = [];
    const name = `probe-${randomUUID()}`;
    const task = (who: string): ScheduledTask => ({
      name,
      everySeconds: 1,
      async run() {
        runs.push(who);
        await sleep(50);
      },
    });
    const [onA] = a.claimTasks([task("a")]);
    const [onB] = b.claimTasks([task("b")]);
    const signal = new AbortController().signal;
    await Promise.all([onA!.run({} as never, signal), onB!.run({} as never, signal)]);
    expect(runs).toHaveLength(1);
    const first = runs[0];
    await sleep(1_100);
    const later = first === "a" ? onB! : onA!;
    await later.run({} as never, signal);
    expect(runs).toHaveLength(2);
    expect(runs[1]).not.toBe(first);
  });

  it("delete expired rows in the housekeeping pass", async () => {
    const pk = `gone#${randomUUID()}`;
    await a.records.put({ pk, sk: "x", ttl: Date.now() / 1000 - 5 });
    await a.counters.add(`gone:${pk}`, 1, { expiresAt: Date.now() / 1000 - 5 });
    const housekeeping = a.claimTasks([]).find((task) => task.name === "mysql-housekeeping")!;
    await housekeeping.run({} as never, new AbortController().signal);
    const connection = await mysql.createConnection({ ...parseDatabaseUrl(opened.url) });
    try {
      const [rows] = await connection.query("SELECT COUNT(*) AS n FROM records WHERE pk = ?", [pk]);
      expect((rows as Array<{ n: number }>)[0]!.n).toBe(0);
      const [counters] = await connection.query("SELECT COUNT(*) AS n FROM counters WHERE k = ?", [`gone:${pk}`]);
      expect((counters as Array<{ n: number }>)[0]!.n).toBe(0);
    } finally {
      await connection.end();
    }
  });
});

describe("MySQL store specifics", () => {
  it("creates its schema once, records its version, and refuses a database a newer gateway migrated", async () => {
    const url = await testDatabaseUrl("schema");
    const database = new Database({ url, poolSize: 2 });
    try {
      expect(await migrate(database)).toEqual(MIGRATIONS.map((migration) => migration.version));
      // Two replicas starting together: the second waits for the lock and finds nothing to do.
      expect(await Promise.all([migrate(database), migrate(database)])).toEqual([[], []]);
      const versions = await database.run<Array<{ version: number }>>("test", "SELECT version FROM gateway_schema");
      expect(versions.map((row) => row.version)).toEqual([SCHEMA_VERSION]);
      await database.run("test", "INSERT INTO gateway_schema (version, name) VALUES (?, 'from the future')", [
        SCHEMA_VERSION + 1,
      ]);
      await expect(migrate(database)).rejects.toThrow(/newer than this gateway knows/);
    } finally {
      await database.close();
    }
  });

  it("keeps data across a restart and answers StoreUnavailableError once closed or unreachable", async () => {
    const restart = await testMysqlStores("restart");
    try {
      const first = restart.stores;
      await first.records.put({ pk: "p", sk: "s", kept: 1 });
      await first.counters.add("c", 3);
      await first.queue.send("q", "message");
      await first.close();
      await expect(first.records.get("p", "s")).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(first.counters.add("c", 1)).rejects.toBeInstanceOf(StoreUnavailableError);
      const second = await restart.another();
      expect(await second.records.get("p", "s")).toEqual({ pk: "p", sk: "s", kept: 1 });
      expect(await second.counters.get("c")).toBe(3);
      expect((await second.queue.receive("q", { max: 1, visibilityTimeoutSeconds: 5 }))[0]?.body).toBe("message");
    } finally {
      await restart.close();
    }
    const nowhere = new Database({ url: "mysql://u:p@127.0.0.1:9/none", poolSize: 1, connectTimeoutMs: 2000 });
    await expect(nowhere.run("test", "SELECT 1")).rejects.toBeInstanceOf(StoreUnavailableError);
    await nowhere.close();
  });

  it("connects over TLS verified against the server's CA (DB_TLS=on, DB_TLS_CA_FILE)", async () => {
    const server = await sharedMariaDb();
    const url = await testDatabaseUrl("tls");
    const verified = new Database({ url, poolSize: 1, tls: "on", caFile: server.caFile });
    try {
      const [status] = await verified.run<Array<{ Value: string }>>("test", "SHOW SESSION STATUS LIKE 'Ssl_cipher'");
      expect(status?.Value).toMatch(/\w/);
    } finally {
      await verified.close();
    }
    // The server's self-signed certificate is not among the system's CAs: a verified connection is refused.
    const unverifiable = new Database({ url, poolSize: 1, tls: "on" });
    await expect(unverifiable.run("test", "SELECT 1")).rejects.toThrow();
    await unverifiable.close();
    const plain = new Database({ url, poolSize: 1 });
    const [status] = await plain.run<Array<{ Value: string }>>("test", "SHOW SESSION STATUS LIKE 'Ssl_cipher'");
    expect(status?.Value ?? "").toBe("");
    await plain.close();
  });

  it("reads committed data in every pooled session (no gap locks between concurrent creators)", async () => {
    const database = new Database({ url: opened.url, poolSize: 3 });
    try {
      const levels = await Promise.all(
        Array.from({ length: 6 }, () =>
          database.transaction("test", (run) => run<Array<{ level: string }>>("SELECT @@tx_isolation AS level")),
        ),
      );
      expect(new Set(levels.map(([row]) => row!.level))).toEqual(new Set(["READ-COMMITTED"]));
    } finally {
      await database.close();
    }
  });

  it("reads DATABASE_URL with percent-encoded credentials and refuses other URLs", () => {
    expect(parseDatabaseUrl("mysql://us%40er:p%3Ass@db.internal:3307/gw")).toEqual({
      host: "db.internal",
      port: 3307,
      user: "us@er",
      password: "p:ss",
      database: "gw",
    });
    expect(() => parseDatabaseUrl("postgres://u:p@h/db")).toThrow(/mysql:\/\//);
    expect(() => parseDatabaseUrl("mysql://u:p@h")).toThrow(/name a database/);
  });
});

import { AesGcmSecrets } from "../../store/aes-gcm.ts";
import type { Blobs, Stores } from "../../store/ports.ts";
import type { SecretResolver } from "../../store/secret-refs.ts";
import type { ScheduledTask } from "../../workers/scheduled-task.ts";
import { claimedTask, Leases } from "./claimed-tasks.ts";
import { Database, type DatabaseOptions } from "./database.ts";
import { housekeepingTask } from "./housekeeping.ts";
import { LogSpill } from "./log-spill.ts";
import { MysqlCounters } from "./mysql-counters.ts";
import { MysqlLogSink } from "./mysql-log-sink.ts";
import { MysqlQueue } from "./mysql-queue.ts";
import { MysqlRecords } from "./mysql-records.ts";
import { MysqlVectorIndex, type MysqlVectorIndexOptions } from "./mysql-vector-index.ts";
import { migrate } from "./schema.ts";

export interface MysqlStoresOptions {
  database: DatabaseOptions;
  /** The log store's database, when not `database` (LOG_STORE_DATABASE_URL); its own pool either way. */
  logDatabase?: DatabaseOptions;
  /** LOG_STORE_CONNECTION_FAILURE_THRESHOLD / _BACKOFF_MS / _TIMEOUT_MS. */
  logStore: { threshold: number; backoffMs: number; timeoutMs: number };
  /** The local-disk buffer of logs the log store could not take. */
  logBuffer: { dir: string; maxBytes: number };
  /** An S3-compatible bucket or a folder every process mounts (mysql-config.ts chooses). */
  blobs: Blobs;
  /** Closes what `blobs` holds open (an S3 client). */
  closeBlobs?: () => void;
  /** The master key every process shares (AES-GCM secrets). */
  masterKey: Uint8Array;
  vectorLimits: MysqlVectorIndexOptions;
  secretRefs?: SecretResolver;
}

/** Connections of the log store's pool: its inserts are batched, so a few carry every process's logs. */
const LOG_POOL_SIZE = 4;

export interface MysqlStores extends Stores {
  logSink: MysqlLogSink;
  vectors: MysqlVectorIndex;
  leases: Leases;
  /** The scheduled tasks wrapped so one process at a time runs each, plus the store's own housekeeping. */
  claimTasks(tasks: readonly ScheduledTask[]): ScheduledTask[];
}

/**
 * Every store of the MySQL platform (MySQL 8 / MariaDB 10.6+ through mysql2): records, counters, queues and
 * vectors in one database on a pool of DB_POOL_SIZE connections, request logs on a pool of their own (the same
 * database by default), blobs on an S3-compatible store or a shared folder, secrets sealed with a master key
 * every process shares. The schema is created and migrated first (schema.ts). Several gateway processes on one
 * database behave as one gateway (docs/self-hosting.md).
 */
export async function createMysqlStores(options: MysqlStoresOptions): Promise<MysqlStores> {
  const database = new Database(options.database);
  const logOptions = options.logDatabase ?? options.database;
  const { timeoutMs } = options.logStore;
  const logDatabase = new Database({
    ...logOptions,
    poolSize: Math.min(LOG_POOL_SIZE, logOptions.poolSize),
    connectTimeoutMs: timeoutMs,
    statementTimeoutMs: timeoutMs,
  });
  let prepareLogs: (() => Promise<unknown>) | undefined;
  try {
    await migrate(database);
    // The log store may be down at start: its schema is then created when it first answers (logs wait in the
    // buffer meanwhile).
    if (options.logDatabase) {
      await migrate(logDatabase).catch((error) => {
        console.error(`log store not reachable at start (${(error as Error).message}); logs wait in the local buffer`);
        prepareLogs = () => migrate(logDatabase);
      });
    }
  } catch (error) {
    await Promise.allSettled([database.close(), logDatabase.close()]);
    throw error;
  }
  const records = new MysqlRecords(database, "records");
  const vectors = new MysqlVectorIndex(database, options.vectorLimits);
  const logSink = new MysqlLogSink({
    database: logDatabase,
    blobs: options.blobs,
    spill: new LogSpill(options.logBuffer.dir, options.logBuffer.maxBytes),
    ...options.logStore,
    prepare: prepareLogs,
  });
  const leases = new Leases(records);
  const housekeeping = housekeepingTask({ database, logDatabase, vectors });
  return {
    records,
    logSink,
    counters: new MysqlCounters(database),
    blobs: options.blobs,
    queue: new MysqlQueue(database),
    secrets: new AesGcmSecrets(options.masterKey),
    vectors,
    secretRefs: options.secretRefs,
    leases,
    claimTasks: (tasks) => [...tasks, housekeeping].map((task) => claimedTask(task, leases)),
    async close() {
      vectors.close();
      await logSink.close();
      options.closeBlobs?.();
      await Promise.allSettled([database.close(), logDatabase.close()]);
    },
  };
}

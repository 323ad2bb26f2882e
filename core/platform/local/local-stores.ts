import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Stores } from "../../store/ports.ts";
import type { SecretResolver } from "../../store/secret-refs.ts";
import { FolderBlobs } from "./folder-blobs.ts";
import { KeyFileSecrets, loadOrCreateKeyFile } from "./key-file-secrets.ts";
import { initialiseBackfill } from "./log-index-schema.ts";
import { type LogReaderOptions, LogReaderThread } from "./log-reader-thread.ts";
import { moveRequestLogs } from "./move-request-logs.ts";
import { LOG_PAGE_CACHE_KIB, openDatabase } from "./sqlite.ts";
import { SqliteCounters } from "./sqlite-counters.ts";
import { SqliteLogIndex } from "./sqlite-log-index.ts";
import { SqliteQueue } from "./sqlite-queue.ts";
import { SqliteRecords } from "./sqlite-records.ts";
import { SqliteVectorIndex, type SqliteVectorIndexOptions } from "./sqlite-vector-index.ts";
import { StorageThread } from "./storage-thread.ts";
import { ThreadLogSink } from "./thread-log-sink.ts";
import { checkpointLoopOptions, type WalCheckpointOptions, WalCheckpointer } from "./wal-checkpointer.ts";
import { WorkerRecords } from "./worker-records.ts";
import { WriteBatcher } from "./write-batcher.ts";

export interface LocalStoresOptions {
  /** Folder for gateway.db, logs.db, blobs/ and master.key; created when missing. */
  dataDir: string;
  /** Base URL of the local server, used in signed blob URLs. */
  publicBaseUrl: string | (() => string);
  /** WAL checkpoint cadence and restart length (tests shorten them). */
  wal?: WalCheckpointOptions;
  /** Entry limits of the semantic cache's vector index (GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES[_PER_SCOPE]). */
  vectorLimits?: SqliteVectorIndexOptions;
  /** Resolves secret references in provider credentials (env: and file:, core/platform/local/local-secret-refs.ts). */
  secretRefs?: SecretResolver;
  /** The log reader thread's idle time and queue bound (tests shorten them). */
  logReader?: LogReaderOptions;
}

/** The defaults of GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES and GATEWAY_SEMANTIC_CACHE_MAX_ENTRIES_PER_SCOPE. */
const DEFAULT_VECTOR_LIMITS = { maxEntries: 100_000, maxEntriesPerScope: 100_000 };

export interface LocalStores extends Stores {
  blobs: FolderBlobs;
  logSink: ThreadLogSink;
  /** Where the log sink's searches run (started on the first one). */
  logReader: LogReaderThread;
  vectors: SqliteVectorIndex;
}

/**
 * Every store of the local platform: one SQLite file for records, counters and queues, a second one for
 * request logs and their search index (written by the storage thread, searched by the log reader thread: the
 * log sink), a folder for blobs.
 */
export function createLocalStores(options: LocalStoresOptions): LocalStores {
  mkdirSync(options.dataDir, { recursive: true });
  const db = openDatabase(join(options.dataDir, "gateway.db"));
  const writes = new WriteBatcher(db);
  const records = new SqliteRecords(db, writes);
  // Request logs: read here, written by the storage thread (its own file, so neither waits for the other's lock).
  const logsFile = join(options.dataDir, "logs.db");
  const logsDb = openDatabase(logsFile, LOG_PAGE_CACHE_KIB);
  const logsWrites = new WriteBatcher(logsDb);
  const localLogs = new SqliteRecords(logsDb, logsWrites);
  moveRequestLogs(db, logsFile);
  // The search index, and where indexing the logs written before it existed starts (before any thread writes).
  const localLogIndex = new SqliteLogIndex(logsDb, logsWrites);
  initialiseBackfill(logsDb);
  const thread = new StorageThread({ checkpoint: checkpointLoopOptions(db, options.wal), recordsFile: logsFile });
  const checkpointer = new WalCheckpointer(db, thread);
  writes.afterCommit(() => checkpointer.afterCommit());
  const logs = new WorkerRecords(localLogs, localLogIndex, thread);
  const logReader = new LogReaderThread(logsFile, options.logReader);

  const keyFile = join(options.dataDir, "master.key");
  // A separate key for URL signatures, derived so the key file stays the only secret to keep.
  const signingKey = createHmac("sha256", loadOrCreateKeyFile(keyFile)).update("gateway blob url signing").digest();
  const blobs = new FolderBlobs({
    root: join(options.dataDir, "blobs"),
    publicBaseUrl: options.publicBaseUrl,
    signingKey,
  });
  const vectors = new SqliteVectorIndex(db, writes, options.vectorLimits ?? DEFAULT_VECTOR_LIMITS);
  return {
    records,
    logSink: new ThreadLogSink(logs, blobs, logReader),
    logReader,
    counters: new SqliteCounters(db, writes),
    queue: new SqliteQueue(db, writes),
    blobs,
    secrets: new KeyFileSecrets(keyFile),
    vectors,
    secretRefs: options.secretRefs,
    async close() {
      await logReader.close();
      vectors.close();
      writes.flush();
      logs.flush();
      await thread.close();
      // Writes made while the thread closed (a counter add answered at once, a log written here) are in new batches.
      writes.flush();
      logsWrites.flush();
      db.close();
      logsDb.close();
    },
  };
}

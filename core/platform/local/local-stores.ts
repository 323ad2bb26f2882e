import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Stores } from "../../store/ports.ts";
import { FolderBlobs } from "./folder-blobs.ts";
import { KeyFileSecrets, loadOrCreateKeyFile } from "./key-file-secrets.ts";
import { openDatabase } from "./sqlite.ts";
import { SqliteCounters } from "./sqlite-counters.ts";
import { SqliteQueue } from "./sqlite-queue.ts";
import { SqliteRecords } from "./sqlite-records.ts";
import { type WalCheckpointOptions, WalCheckpointer } from "./wal-checkpointer.ts";
import { WriteBatcher } from "./write-batcher.ts";

export interface LocalStoresOptions {
  /** Folder for gateway.db, blobs/ and master.key; created when missing. */
  dataDir: string;
  /** Base URL of the local server, used in signed blob URLs. */
  publicBaseUrl: string | (() => string);
  /** WAL checkpoint cadence and restart length (tests shorten them). */
  wal?: WalCheckpointOptions;
}

export interface LocalStores extends Stores {
  blobs: FolderBlobs;
}

/** Every store of the local platform: one SQLite file for records, counters and queues, a folder for blobs. */
export function createLocalStores(options: LocalStoresOptions): LocalStores {
  mkdirSync(options.dataDir, { recursive: true });
  const file = join(options.dataDir, "gateway.db");
  const db = openDatabase(file);
  const writes = new WriteBatcher(db);
  const checkpointer = new WalCheckpointer(db, options.wal);
  writes.afterCommit(() => checkpointer.afterCommit());
  const keyFile = join(options.dataDir, "master.key");
  // A separate key for URL signatures, derived so the key file stays the only secret to keep.
  const signingKey = createHmac("sha256", loadOrCreateKeyFile(keyFile)).update("gateway blob url signing").digest();
  return {
    records: new SqliteRecords(db, writes),
    counters: new SqliteCounters(db, writes),
    queue: new SqliteQueue(db, writes),
    blobs: new FolderBlobs({ root: join(options.dataDir, "blobs"), publicBaseUrl: options.publicBaseUrl, signingKey }),
    secrets: new KeyFileSecrets(keyFile),
    async close() {
      writes.flush();
      await checkpointer.close();
      // Writes made while the checkpointer closed (a counter add answered at once) are in a new batch.
      writes.flush();
      db.close();
    },
  };
}

import type { SqliteDatabase } from "./sqlite.ts";

/** The request logs among the records: keys `LOG#<id>` (core/observe/logs/request-logger.ts); '$' follows '#'. */
const LOG_KEYS = "pk >= 'LOG#' AND pk < 'LOG$'";

/**
 * Request logs used to live in gateway.db's records table; they now have logs.db to themselves. Moves any
 * left in gateway.db (a data dir from an earlier version): a no-op index probe otherwise. Both files must have
 * the records table already (SqliteRecords creates it).
 *
 * Copied first and deleted in a second transaction: one transaction across two WAL databases is atomic per
 * file only, and a crash between the two commits must not lose logs. A crash after the copy leaves them in
 * both files; the next start copies nothing new (INSERT OR IGNORE) and deletes them.
 */
export function moveRequestLogs(db: SqliteDatabase, logsFile: string): void {
  if (!db.prepare(`SELECT 1 FROM records WHERE ${LOG_KEYS} LIMIT 1`).get()) return;
  db.prepare("ATTACH DATABASE ? AS logs").run(logsFile);
  try {
    db.exec(`INSERT OR IGNORE INTO logs.records (pk, sk, gsi1pk, gsi1sk, ttl, data)
      SELECT pk, sk, gsi1pk, gsi1sk, ttl, data FROM main.records WHERE ${LOG_KEYS}`);
    db.exec(`DELETE FROM main.records WHERE ${LOG_KEYS}`);
  } finally {
    db.exec("DETACH DATABASE logs");
  }
}

import type { SqliteDatabase } from "./sqlite.ts";

/**
 * Request logs used to live in gateway.db's records table; they now have logs.db to themselves. Moves any
 * left in gateway.db (a data dir from an earlier version) in one transaction: a no-op index probe otherwise.
 * Both files must have the records table already (SqliteRecords creates it).
 */
export function moveRequestLogs(db: SqliteDatabase, logsFile: string): void {
  // Request logs are the records keyed `LOG#<id>` (core/logs/request-logger.ts); '$' follows '#'.
  const found = db.prepare("SELECT 1 FROM records WHERE pk >= 'LOG#' AND pk < 'LOG$' LIMIT 1").get();
  if (!found) return;
  db.prepare("ATTACH DATABASE ? AS logs").run(logsFile);
  try {
    db.transaction(() => {
      db.exec(`INSERT OR IGNORE INTO logs.records (pk, sk, gsi1pk, gsi1sk, ttl, data)
        SELECT pk, sk, gsi1pk, gsi1sk, ttl, data FROM main.records WHERE pk >= 'LOG#' AND pk < 'LOG$'`);
      db.exec("DELETE FROM main.records WHERE pk >= 'LOG#' AND pk < 'LOG$'");
    })();
  } finally {
    db.exec("DETACH DATABASE logs");
  }
}

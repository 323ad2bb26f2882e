import type { SqliteDatabase } from "./sqlite.ts";

/**
 * The search index of the local request logs, in logs.db beside their records (sqlite-log-index.ts writes it on
 * the storage thread, sqlite-log-search.ts reads it on the log reader thread):
 * - `log_names`: every string the index holds (organisation, workspace, key, user, provider, model, metadata
 *   names and values) once, as a small integer: index keys stay a few bytes, so the writer's B-tree pages stay
 *   in its small page cache.
 * - `log_facts`: one row per log (`seq` in insertion order) with the fields searches filter on, and one index
 *   per filter, each ending in `at` (createdAt, ms) so every filter reads newest first from a keyset position
 *   `(at, seq)`. The dimensions a workspace's console filters on (status, provider, model) are indexed per
 *   workspace too, so a workspace key's search walks its own workspace's entries.
 * - `log_metadata`: one row per metadata pair and one per metadata name (value 0), for those filters.
 * - `log_index_state`: how far the index of logs written before it existed has been built (the backfill).
 */
export function createLogIndexTables(db: SqliteDatabase): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS log_names (n INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
    CREATE TABLE IF NOT EXISTS log_facts (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL,
      at INTEGER NOT NULL,
      ttl INTEGER,
      org INTEGER NOT NULL,
      ws INTEGER,
      trace TEXT NOT NULL,
      api_key INTEGER,
      usr INTEGER,
      status INTEGER NOT NULL,
      provider INTEGER,
      model INTEGER,
      answered_model INTEGER,
      cost REAL,
      metadata TEXT
    );
    CREATE INDEX IF NOT EXISTS log_facts_org ON log_facts (org, at);
    CREATE INDEX IF NOT EXISTS log_facts_ws ON log_facts (ws, at) WHERE ws IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_trace ON log_facts (org, trace, at);
    CREATE INDEX IF NOT EXISTS log_facts_key ON log_facts (api_key, at) WHERE api_key IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_user ON log_facts (usr, at) WHERE usr IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_status ON log_facts (org, status, at);
    CREATE INDEX IF NOT EXISTS log_facts_provider ON log_facts (org, provider, at) WHERE provider IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_model ON log_facts (org, model, at) WHERE model IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_answered ON log_facts (org, answered_model, at)
      WHERE answered_model IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_ws_status ON log_facts (ws, status, at) WHERE ws IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_ws_provider ON log_facts (ws, provider, at)
      WHERE ws IS NOT NULL AND provider IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_ws_model ON log_facts (ws, model, at)
      WHERE ws IS NOT NULL AND model IS NOT NULL;
    CREATE INDEX IF NOT EXISTS log_facts_ws_answered ON log_facts (ws, answered_model, at)
      WHERE ws IS NOT NULL AND answered_model IS NOT NULL;
    CREATE TABLE IF NOT EXISTS log_metadata (
      org INTEGER NOT NULL,
      name INTEGER NOT NULL,
      value INTEGER NOT NULL,
      at INTEGER NOT NULL,
      seq INTEGER NOT NULL,
      PRIMARY KEY (org, name, value, at, seq)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS log_index_state (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
  `);
}

/** `log_metadata.value` of the row that says a log has a metadata name, whatever its value (names start at 1). */
export const ANY_VALUE = 0;

/** The columns of `log_facts` a search reads, in this order. */
export const FACT_COLUMNS =
  "seq, id, at, ttl, org, ws, trace, api_key, usr, status, provider, model, answered_model, cost, metadata";

export interface FactRow {
  seq: number;
  id: string;
  at: number;
  ttl: number | null;
  org: number;
  ws: number | null;
  trace: string;
  api_key: number | null;
  usr: number | null;
  status: number;
  provider: number | null;
  model: number | null;
  answered_model: number | null;
  cost: number | null;
  metadata: string | null;
}

/**
 * Records of the logs written before the index existed are indexed below this rowid (the storage thread's
 * backfill lowers it as it goes, down to 0 when done). Set once, when the index is created, so logs written
 * from then on (higher rowids) are indexed as they are written and never twice.
 */
export const BACKFILL_BELOW = "backfill_below";

export function initialiseBackfill(db: SqliteDatabase): void {
  db.prepare(
    `INSERT OR IGNORE INTO log_index_state (name, value)
     SELECT ?, coalesce(max(rowid), 0) + 1 FROM records`,
  ).run(BACKFILL_BELOW);
}

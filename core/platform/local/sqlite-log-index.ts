import type { LogFacts } from "../../logs/log-search.ts";
import { logFacts } from "../../logs/log-search.ts";
import type { RequestLog } from "../../logs/log-record.ts";
import { ANY_VALUE, BACKFILL_BELOW, createLogIndexTables } from "./log-index-schema.ts";
import { LogNameWriter } from "./log-names.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";
import type { WriteBatcher } from "./write-batcher.ts";

/** Records indexed per step of the backfill: a few milliseconds, so writes waiting behind it wait little. */
const BACKFILL_STEP = 200;

/**
 * Writes the search index of the local request logs (log-index-schema.ts) beside their records, in the same
 * write transaction: on the storage thread (record-write-service.ts), or on the main thread's connection once
 * that thread is gone (worker-records.ts).
 */
export class SqliteLogIndex {
  readonly #writes: WriteBatcher;
  readonly #names: LogNameWriter;
  readonly #insertFact: SqliteStatement;
  readonly #insertMetadata: SqliteStatement;
  readonly #backfillRows: SqliteStatement;
  readonly #backfillState: SqliteStatement;
  readonly #setBackfillState: SqliteStatement;

  constructor(db: SqliteDatabase, writes: WriteBatcher) {
    createLogIndexTables(db);
    this.#writes = writes;
    this.#names = new LogNameWriter(db);
    writes.afterCommit(() => this.#names.committed());
    writes.afterRollback(() => this.#names.rolledBack());
    this.#insertFact = db.prepare(
      `INSERT INTO log_facts (id, at, ttl, org, ws, trace, api_key, usr, status, provider, model, answered_model,
         cost, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
    this.#insertMetadata = db.prepare(
      "INSERT OR IGNORE INTO log_metadata (org, name, value, at, seq) VALUES (?, ?, ?, ?, ?)",
    );
    this.#backfillRows = db.prepare(
      `SELECT rowid, data, ttl FROM records WHERE rowid < ? AND pk >= 'LOG#' AND pk < 'LOG$' AND sk = 'LOG'
       ORDER BY rowid DESC LIMIT ?`,
    );
    this.#backfillState = db.prepare("SELECT value FROM log_index_state WHERE name = ?").pluck();
    this.#setBackfillState = db.prepare("UPDATE log_index_state SET value = ? WHERE name = ?");
  }

  /** Indexes a log, in the open write batch (call it right after the log's record is written there). */
  add(facts: LogFacts, ttl: number | undefined): void {
    this.#writes.runNow("logs.index", () => this.#insert(facts, ttl));
  }

  #insert(facts: LogFacts, ttl: number | undefined): void {
    const names = this.#names;
    const name = (value: string | undefined) => (value === undefined ? null : names.number(value));
    const at = Date.parse(facts.createdAt);
    const org = names.number(facts.organisationId);
    const model = name(facts.requestedModel);
    const answered = facts.answeredModel === facts.requestedModel ? null : name(facts.answeredModel);
    const metadata = facts.metadata && Object.keys(facts.metadata).length > 0 ? facts.metadata : undefined;
    // A record from before a field was required must not stop the backfill.
    const trace = facts.traceId ?? "";
    const seq = this.#insertFact.run(
      facts.id,
      at,
      ttl ?? null,
      org,
      name(facts.workspaceId),
      trace,
      name(facts.apiKeyId),
      name(facts.userId),
      facts.status ?? 0,
      name(facts.provider),
      model,
      answered,
      facts.cost ?? null,
      metadata ? JSON.stringify(metadata) : null,
    ).lastInsertRowid;
    for (const [key, value] of Object.entries(metadata ?? {})) {
      const keyNumber = names.number(key);
      this.#insertMetadata.run(org, keyNumber, ANY_VALUE, at, seq);
      this.#insertMetadata.run(org, keyNumber, names.number(value), at, seq);
    }
  }

  /**
   * Indexes a step of the logs written before the index existed, newest first (their records' rowids below the
   * backfill mark, log-index-schema.ts), and lowers the mark in the same transaction. Resolves true while more
   * remain. Searches find those logs as the backfill reaches them.
   */
  async backfillStep(): Promise<boolean> {
    return this.#writes.run("logs.backfill", () => {
      const below = (this.#backfillState.get(BACKFILL_BELOW) as number | undefined) ?? 0;
      if (below <= 1) return false;
      const rows = this.#backfillRows.all(below, BACKFILL_STEP) as Array<{
        rowid: number;
        data: string;
        ttl: number | null;
      }>;
      for (const row of rows) {
        const log = JSON.parse(row.data) as RequestLog;
        if (typeof log.createdAt === "string" && typeof log.organisationId === "string") {
          this.#insert(logFacts(log), row.ttl ?? undefined);
        }
      }
      const next = rows.length < BACKFILL_STEP ? 0 : rows.at(-1)!.rowid;
      this.#setBackfillState.run(next, BACKFILL_BELOW);
      return next > 1;
    });
  }
}

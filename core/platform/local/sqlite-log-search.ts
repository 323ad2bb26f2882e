import { collectMatches, type IndexEntry } from "../../logs/index-scan.ts";
import type { RequestLog } from "../../logs/log-record.ts";
import {
  conditionCount,
  cursorPosition,
  type LogFacts,
  type LogSearch,
  type LogSearchPage,
  withoutBodies,
} from "../../logs/log-search.ts";
import { storedLog } from "../../logs/log-layout.ts";
import { nowSeconds } from "../../store/record-rules.ts";
import { ANY_VALUE, FACT_COLUMNS, type FactRow } from "./log-index-schema.ts";
import { LogNameReader } from "./log-names.ts";
import type { SqliteDatabase, SqliteStatement } from "./sqlite.ts";

/** How one search reads its index: newest first from the keyset position (at, seq), down to `from`. */
interface Driver {
  read(at: number, seq: number, fromMs: number, count: number): FactRow[];
  /** Whether the index alone decides (every row it gives matches, expired ones aside). */
  exact: boolean;
}

/** Position of an index row: `<at>.<seq>`. */
const POSITION = /^(\d{1,16})\.(\d{1,16})$/;
const KEYSET = "(at, seq) < (?, ?) AND at >= ? ORDER BY at DESC, seq DESC LIMIT ?";

/**
 * Searches the local request logs through their index (log-index-schema.ts): synchronous SQLite reads, run on the
 * log reader thread (log-reader-worker.ts), never on the gateway's event loop. Each search walks the one index
 * its most selective condition names (the order of core/logs/index-terms.ts, in its workspace where indexed
 * there), reads a bounded number of rows (core/logs/index-scan.ts) and then the matching logs' records.
 */
export class SqliteLogSearch {
  readonly #db: SqliteDatabase;
  readonly #names: LogNameReader;
  readonly #statements = new Map<string, SqliteStatement>();
  readonly #record: SqliteStatement;

  constructor(db: SqliteDatabase) {
    this.#db = db;
    this.#names = new LogNameReader(db);
    this.#record = db.prepare("SELECT data FROM records WHERE pk = ? AND sk = 'LOG'").pluck();
  }

  async search(search: LogSearch): Promise<LogSearchPage> {
    // A cursor this search did not make is refused whatever else the search names.
    if (search.cursor !== undefined) parsePosition(cursorPosition(search.cursor));
    const driver = this.#driver(search);
    // A value no log has (a model never used): nothing can match, and nothing is read.
    if (!driver) return { items: [] };
    const fromMs = Date.parse(search.from);
    const toMs = Date.parse(search.to);
    const now = nowSeconds();
    const wantsMetadata = search.metadataKey !== undefined;
    const { matched, cursor } = await collectMatches(
      search,
      async (after, count) => {
        const [at, seq] = after === undefined ? [toMs + 1, 0] : parsePosition(after);
        const rows = driver.read(at, seq, fromMs, count);
        const entries = rows.map(
          (row): IndexEntry => ({ position: `${row.at}.${row.seq}`, facts: this.#facts(row, now, wantsMetadata) }),
        );
        return { entries, next: rows.length === count ? entries.at(-1)!.position : undefined };
      },
      driver.exact ? search.limit : Math.max(search.limit * 4, 500),
    );
    return { items: this.#load(matched), cursor };
  }

  /**
   * The index the search walks, chosen in the order of core/logs/index-terms.ts (undefined when a name it asks
   * for is in no log: then nothing can match).
   */
  #driver(search: LogSearch): Driver | undefined {
    const names = this.#names;
    const org = names.number(search.organisationId);
    const ws = search.workspaceId === undefined ? undefined : names.number(search.workspaceId);
    if (org === undefined || (search.workspaceId !== undefined && ws === undefined)) return undefined;
    const conditions = conditionCount(search);
    // Exact when the index holds the only condition (none for "every log") and the search's workspace.
    const exact = (used: number, inWorkspace: boolean) =>
      conditions === used && (search.workspaceId === undefined || inWorkspace);
    // Status, provider, model and every log are indexed per workspace too.
    const scope =
      ws === undefined ? { prefix: "", column: "org", value: org } : { prefix: "ws_", column: "ws", value: ws };
    const inScope = ws !== undefined;
    const lookup = (value: string | undefined) => (value === undefined ? undefined : names.number(value));

    if (search.traceId !== undefined) {
      return {
        read: this.#factsReader("trace", "org = ? AND trace = ?", [org, search.traceId]),
        exact: exact(1, false),
      };
    }
    if (search.apiKeyId !== undefined) {
      const key = lookup(search.apiKeyId);
      return key === undefined
        ? undefined
        : { read: this.#factsReader("key", "api_key = ?", [key]), exact: exact(1, false) };
    }
    if (search.userId !== undefined) {
      const user = lookup(search.userId);
      return user === undefined
        ? undefined
        : { read: this.#factsReader("user", "usr = ?", [user]), exact: exact(1, false) };
    }
    const metadataKey = lookup(search.metadataKey);
    if (search.metadataKey !== undefined && metadataKey === undefined) return undefined;
    if (metadataKey !== undefined && search.metadataValue !== undefined) {
      const value = lookup(search.metadataValue);
      if (value === undefined) return undefined;
      return { read: this.#metadataReader(org, metadataKey, value), exact: exact(1, false) };
    }
    if (search.model !== undefined) {
      const model = lookup(search.model);
      return model === undefined ? undefined : { read: this.#modelReader(scope, model), exact: exact(1, inScope) };
    }
    if (metadataKey !== undefined) {
      return { read: this.#metadataReader(org, metadataKey, ANY_VALUE), exact: exact(1, false) };
    }
    if (search.provider !== undefined) {
      const provider = lookup(search.provider);
      if (provider === undefined) return undefined;
      const where = `${scope.column} = ? AND provider = ?`;
      return {
        read: this.#factsReader(`${scope.prefix}provider`, where, [scope.value, provider]),
        exact: exact(1, inScope),
      };
    }
    if (search.status !== undefined) {
      const where = `${scope.column} = ? AND status = ?`;
      return {
        read: this.#factsReader(`${scope.prefix}status`, where, [scope.value, search.status]),
        exact: exact(1, inScope),
      };
    }
    return { read: this.#factsReader(scope.column, `${scope.column} = ?`, [scope.value]), exact: exact(0, inScope) };
  }

  #factsReader(index: string, where: string, values: unknown[]): Driver["read"] {
    const statement = this.#statement(
      `SELECT ${FACT_COLUMNS} FROM log_facts INDEXED BY log_facts_${index} WHERE ${where} AND ${KEYSET}`,
    );
    return (at, seq, fromMs, count) => statement.all(...values, at, seq, fromMs, count) as FactRow[];
  }

  /** Requested or answered model: the two indexes' newest rows, merged (a log is in one of them only). */
  #modelReader(scope: { prefix: string; column: string; value: number }, model: number): Driver["read"] {
    const leg = (column: string, index: string) =>
      `SELECT * FROM (SELECT ${FACT_COLUMNS} FROM log_facts INDEXED BY log_facts_${scope.prefix}${index}
        WHERE ${scope.column} = ? AND ${column} = ? AND ${KEYSET})`;
    const statement = this.#statement(
      `${leg("model", "model")} UNION ALL ${leg("answered_model", "answered")} ORDER BY at DESC, seq DESC LIMIT ?`,
    );
    return (at, seq, fromMs, count) => {
      const leg = [scope.value, model, at, seq, fromMs, count];
      return statement.all(...leg, ...leg, count) as FactRow[];
    };
  }

  /** Logs with a metadata name and value (or with the name, value ANY_VALUE), through log_metadata. */
  #metadataReader(org: number, key: number, value: number): Driver["read"] {
    const columns = FACT_COLUMNS.split(", ")
      .map((column) => `f.${column}`)
      .join(", ");
    const statement = this.#statement(
      `SELECT ${columns} FROM log_metadata m JOIN log_facts f ON f.seq = m.seq
       WHERE m.org = ? AND m.name = ? AND m.value = ? AND (m.at, m.seq) < (?, ?) AND m.at >= ?
       ORDER BY m.at DESC, m.seq DESC LIMIT ?`,
    );
    return (at, seq, fromMs, count) => statement.all(org, key, value, at, seq, fromMs, count) as FactRow[];
  }

  /** A row's facts as the search checks them (undefined once expired); metadata parsed only when asked for. */
  #facts(row: FactRow, now: number, withMetadata: boolean): LogFacts | undefined {
    if (row.ttl !== null && row.ttl < now) return undefined;
    const names = this.#names;
    const requestedModel = names.name(row.model);
    return {
      id: row.id,
      createdAt: new Date(row.at).toISOString(),
      organisationId: names.name(row.org)!,
      workspaceId: names.name(row.ws),
      traceId: row.trace,
      apiKeyId: names.name(row.api_key),
      userId: names.name(row.usr),
      status: row.status,
      provider: names.name(row.provider),
      requestedModel,
      answeredModel: row.answered_model === null ? requestedModel : names.name(row.answered_model),
      cost: row.cost ?? undefined,
      metadata: withMetadata && row.metadata ? (JSON.parse(row.metadata) as Record<string, string>) : undefined,
    };
  }

  /** The matching logs' records, without their bodies (a record gone meanwhile is left out). */
  #load(entries: IndexEntry[]): RequestLog[] {
    const logs: RequestLog[] = [];
    for (const entry of entries) {
      const data = this.#record.get(`LOG#${entry.facts!.id}`) as string | undefined;
      if (data !== undefined) logs.push(withoutBodies(storedLog(JSON.parse(data))));
    }
    return logs;
  }

  #statement(sql: string): SqliteStatement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }
}

function parsePosition(position: string): [number, number] {
  const match = POSITION.exec(position);
  if (!match) throw new RangeError("invalid cursor");
  return [Number(match[1]), Number(match[2])];
}

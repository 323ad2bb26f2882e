import { readFileSync } from "node:fs";
import mysql, { type Pool, type PoolConnection, type PoolOptions } from "mysql2/promise";
import { StoreUnavailableError } from "../../store/ports.ts";
import { NETWORK_CODES } from "../aws/errors.ts";

/** How to reach one database: a URL (`mysql://user:password@host:port/database`) or its parts. */
export interface DatabaseOptions {
  url?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
  database?: string;
  /** Connections kept at most (DB_POOL_SIZE). */
  poolSize: number;
  /** `on`: TLS verified against the system CAs (or `caFile`); `skip-verify`: encrypted, not verified. */
  tls?: "off" | "on" | "skip-verify";
  caFile?: string;
  /** Bound on opening a connection (ms). */
  connectTimeoutMs?: number;
  /** Bound on each statement (ms); a statement past it fails and its connection is closed. */
  statementTimeoutMs?: number;
}

/** Server error numbers worth running a transaction again for: a deadlock, a lock wait that timed out. */
const RETRY_ERRNOS = new Set([1213, 1205]);
/** How long closing waits for the server to acknowledge (ms). */
const CLOSE_WAIT_MS = 2000;
/** Attempts of a transaction that keeps meeting deadlocks. */
const MAX_ATTEMPTS = 6;

/** Faults that say the database cannot be used now (answered 503), as opposed to a bad statement (a bug). */
const UNAVAILABLE_CODES = new Set([
  ...NETWORK_CODES,
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "ER_LOCK_WAIT_TIMEOUT",
  "ER_LOCK_DEADLOCK",
  "ER_QUERY_INTERRUPTED",
  "ER_OPTION_PREVENTS_STATEMENT",
  "ER_CANT_LOCK",
  "ER_OUT_OF_RESOURCES",
  "ER_DISK_FULL",
  "ER_RECORD_FILE_FULL",
]);

export function isDuplicateKey(error: unknown): boolean {
  return (error as { errno?: unknown })?.errno === 1062;
}

/** A fault of the database (unreachable, closed, overloaded) as StoreUnavailableError; other errors as they are. */
export function toStoreError(error: unknown, what: string): unknown {
  if (error instanceof StoreUnavailableError || error instanceof RangeError) return error;
  const { code, fatal, errno, message } = (error ?? {}) as {
    code?: string;
    fatal?: boolean;
    errno?: number;
    message?: string;
  };
  // A key or value longer than its column (strict mode): the caller's input, not a fault.
  if (errno === 1406) return new RangeError(`${what}: a value is longer than the store allows`);
  if (
    fatal ||
    (code && UNAVAILABLE_CODES.has(code)) ||
    /Pool is closed|connection is in closed state/i.test(message ?? "")
  ) {
    return new StoreUnavailableError(`${what}: ${code ?? message ?? "database unavailable"}`, { cause: error });
  }
  return error;
}

export function poolOptions(options: DatabaseOptions): PoolOptions {
  const fromUrl = options.url ? parseDatabaseUrl(options.url) : {};
  const tls = options.tls ?? "off";
  return {
    host: options.host ?? "127.0.0.1",
    port: options.port ?? 3306,
    user: options.user,
    password: options.password,
    database: options.database,
    ...fromUrl,
    connectionLimit: options.poolSize,
    // Connections beyond the pool wait for one to be free, as long as the statement timeout allows.
    waitForConnections: true,
    queueLimit: 0,
    maxIdle: options.poolSize,
    // Sessions keep what the pool set on them (READ COMMITTED) between uses.
    resetOnRelease: false,
    // No stack captured per statement (5% of a request's CPU under load): errors name the operation instead.
    trace: false,
    idleTimeout: 60_000,
    enableKeepAlive: true,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    charset: "utf8mb4_bin",
    supportBigNumbers: true,
    bigNumberStrings: false,
    dateStrings: true,
    timezone: "Z",
    ssl:
      tls === "off"
        ? undefined
        : {
            rejectUnauthorized: tls === "on",
            ...(options.caFile ? { ca: readFileSync(options.caFile, "utf8") } : {}),
          },
  };
}

/** `mysql://user:password@host:port/database` (percent-encoded user and password) as pool options. */
export function parseDatabaseUrl(url: string): Partial<PoolOptions> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new RangeError("DATABASE_URL must be a URL like mysql://user:password@host:3306/database");
  }
  if (parsed.protocol !== "mysql:" && parsed.protocol !== "mariadb:") {
    throw new RangeError(`DATABASE_URL must start with mysql:// (got ${parsed.protocol}//)`);
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (!database) throw new RangeError("DATABASE_URL must name a database (mysql://user:password@host/database)");
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, ""),
    port: parsed.port ? Number(parsed.port) : 3306,
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    database,
  };
}

/** Run on a connection inside `transaction`. */
export type Run = <T = unknown>(sql: string, params?: unknown[]) => Promise<T>;

/**
 * One connection pool and the two ways the stores use it: single statements, and short transactions (a row
 * read FOR UPDATE, checked in code, written) that are run again on a deadlock. Every session reads committed
 * data (READ COMMITTED): a locking read of an absent row then takes no gap lock, so concurrent creators meet at
 * the primary key (a duplicate-key error, retried) instead of deadlocking on gaps.
 */
export class Database {
  readonly pool: Pool;
  readonly #statementTimeoutMs: number | undefined;
  #closed = false;

  constructor(options: DatabaseOptions) {
    this.pool = mysql.createPool(poolOptions(options));
    this.#statementTimeoutMs = options.statementTimeoutMs;
    // The callback connection under each promise connection: its first statement runs before any other.
    this.pool.pool.on("connection", (connection) => {
      connection.query("SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED");
    });
  }

  /** One statement on any pooled connection; rows for a SELECT, the result header for a write. */
  async run<T = unknown>(what: string, sql: string, params: unknown[] = []): Promise<T> {
    try {
      const [result] = await this.pool.query({ sql, values: params, timeout: this.#statementTimeoutMs });
      return result as T;
    } catch (error) {
      throw toStoreError(error, what);
    }
  }

  /**
   * Runs `work` in a transaction on one connection and commits; rolls back when it throws. A deadlock or lock
   * wait timeout runs it again (it must be safe to repeat: read, decide, write), and so does a duplicate key
   * when `retryOnDuplicateKey` says the work inserts a row it found absent.
   */
  async transaction<T>(
    what: string,
    work: (run: Run) => Promise<T>,
    options: { retryOnDuplicateKey?: boolean } = {},
  ): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let connection: PoolConnection | undefined;
      try {
        connection = await this.pool.getConnection();
        const timeout = this.#statementTimeoutMs;
        const on = connection;
        const run: Run = async (sql, params = []) => (await on.query({ sql, values: params, timeout }))[0] as never;
        await on.query({ sql: "START TRANSACTION", timeout });
        let result: T;
        try {
          result = await work(run);
          await on.query({ sql: "COMMIT", timeout });
        } catch (error) {
          await on.query("ROLLBACK").catch(() => {});
          throw error;
        }
        return result;
      } catch (error) {
        const errno = (error as { errno?: unknown }).errno;
        // A duplicate key: a concurrent creator inserted the row this run found absent; the next run locks it.
        const retry = RETRY_ERRNOS.has(errno as number) || (options.retryOnDuplicateKey && isDuplicateKey(error));
        if (retry && attempt < MAX_ATTEMPTS) continue;
        throw toStoreError(error, what);
      } finally {
        connection?.release();
      }
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Ends the pool: each connection says goodbye to the server. A server that hangs never answers that, so after
   * CLOSE_WAIT_MS the connections are dropped instead.
   */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const ended = this.pool.end().then(() => true);
    const waited = new Promise<false>((resolve) => setTimeout(resolve, CLOSE_WAIT_MS, false).unref());
    if (await Promise.race([ended, waited])) return;
    const connections = (this.pool.pool as unknown as { _allConnections?: { toArray?(): Array<{ destroy(): void }> } })
      ._allConnections;
    for (const connection of connections?.toArray?.() ?? []) connection.destroy();
  }
}

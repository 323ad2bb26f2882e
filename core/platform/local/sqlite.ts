import Database from "better-sqlite3";
import { StoreUnavailableError } from "../../store/ports.ts";

export type SqliteDatabase = Database.Database;
export type SqliteStatement = Database.Statement<unknown[], unknown>;

/** Page cache of a connection, KiB. */
export const PAGE_CACHE_KIB = 4096;
/**
 * Page cache of the request-log connections, KiB: logs are appended (the writer touches the last pages of each
 * B-tree) and read a page of results at a time.
 */
export const LOG_PAGE_CACHE_KIB = 1024;
const WAL_SIZE_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * Opens the gateway database. WAL lets readers run beside the one writer; busy_timeout makes a second
 * process (an admin script) wait for the write lock instead of failing at once.
 */
export function openDatabase(file: string, cacheKib = PAGE_CACHE_KIB): SqliteDatabase {
  const db = new Database(file, { timeout: 5_000 });
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = NORMAL");
  // better-sqlite3 builds SQLite with a 16 MB page cache per connection. Writes append to the ends of the
  // B-trees and reads are keyed, so a few MB of hot pages serve as well and keep the resident memory down.
  db.pragma(`cache_size = -${cacheKib}`);
  // When the WAL starts over (wal-checkpointer.ts), a file grown past this is cut back to it.
  db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
  return db;
}

/** SQLite result codes that mean "try again later" rather than "your request is wrong". */
const UNAVAILABLE_CODES = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|PROTOCOL|NOMEM)/;

/** Runs `work`, turning faults of the database itself (busy after the timeout, I/O, closed) into 503s. */
export function sqlite<T>(what: string, work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw toStoreError(error, what);
  }
}

export function toStoreError(error: unknown, what: string): unknown {
  const code = (error as { code?: unknown })?.code;
  if (typeof code === "string" && UNAVAILABLE_CODES.test(code)) {
    return new StoreUnavailableError(`${what}: ${code}`, { cause: error });
  }
  if (error instanceof TypeError && /database connection is not open/.test(error.message)) {
    return new StoreUnavailableError(`${what}: database closed`, { cause: error });
  }
  return error;
}

import type { Records } from "../store/ports.ts";
import type { RequestLog } from "./log-record.ts";
import type { LogSearch, LogSearchPage } from "./log-search.ts";

/** One request log handed to a sink, with how long to keep it. */
export interface LogEntry {
  /**
   * The log. Its bodies may still be deferred (LateJson, late-json.ts: a streamed answer's transcript, an
   * answer's JSON text): resolving them is the sink's job, never the caller's.
   */
  log: RequestLog;
  retentionDays: number;
  /**
   * The bodies' size on the wire (characters), when the caller knows it: small bodies are then stored inline
   * without serialising them first to measure.
   */
  bodiesSize?: number;
}

/**
 * Where request logs go, and are read back from. Each platform provides one adapter (AWS: records-log-sink.ts and
 * core/platform/aws/dynamo-log-sink.ts; local: core/platform/local/thread-log-sink.ts; MySQL:
 * core/platform/mysql/mysql-log-sink.ts); all pass the same contract test
 * (test/contract/log-sink.contract.ts): a written log reads back by id through `records` and the Blobs port
 * (RequestLogger.get) as log-layout.ts lays it out, and is found by `search`. The core hands every log to the
 * sink and tests no capability.
 *
 * `write` takes what it needs from the entry before it returns (the caller then drops the bodies) and
 * resolves once the log is stored: readable, and kept across a restart as the platform's durability allows
 * (docs/durability.md). It rejects when the log was not stored; RequestLogger's circuit breaker bounds how
 * long it may take and stops calling a failing sink for a while.
 */
export interface LogSink {
  write(entry: LogEntry): Promise<void>;
  /**
   * The logs a search names, newest first, through the index the sink keeps beside the logs: bounded work per
   * call whatever the filter and the number of logs, pages that continue from a keyset cursor, and (on a
   * platform with an event loop shared by every tenant) none of it on that loop. The semantics, short pages
   * included, are log-search.ts's. Rejects with RangeError for a cursor it did not make.
   */
  search(search: LogSearch): Promise<LogSearchPage>;
  /** The Records store a log is read from by id (its large bodies from Stores.blobs). */
  readonly records: Records;
}

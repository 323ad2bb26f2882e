import { layoutLog, storeLayout } from "../../logs/log-layout.ts";
import { type LogSearch, type LogSearchPage, logFacts } from "../../logs/log-search.ts";
import type { LogEntry, LogSink } from "../../logs/log-sink.ts";
import type { FolderBlobs } from "./folder-blobs.ts";
import type { LogReaderThread } from "./log-reader-thread.ts";
import type { WorkerRecords } from "./worker-records.ts";

/**
 * The log sink of the local platform: the record goes to the storage thread (worker-records.ts), which
 * inserts it into logs.db with its search index (sqlite-log-index.ts) and produces its deferred bodies there (a
 * streamed answer is assembled off the event loop); large bodies are written to the blob folder first, from
 * here. Searches run on the log reader thread (log-reader-thread.ts); a log is read by id through `records`,
 * a keyed read on a main-thread connection to logs.db.
 */
export class ThreadLogSink implements LogSink {
  readonly records: WorkerRecords;
  readonly #blobs: FolderBlobs;
  readonly #reader: LogReaderThread;

  constructor(records: WorkerRecords, blobs: FolderBlobs, reader: LogReaderThread) {
    this.records = records;
    this.#blobs = blobs;
    this.#reader = reader;
  }

  write(entry: LogEntry): Promise<void> {
    try {
      // The storage thread produces deferred bodies itself (late-attributes.ts).
      const layout = layoutLog(entry);
      const facts = logFacts(entry.log);
      return storeLayout(this.#blobs, layout, (item) => this.records.putIndexed(item, facts));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  search(search: LogSearch): Promise<LogSearchPage> {
    return this.#reader.search(search);
  }
}

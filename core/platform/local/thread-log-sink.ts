import { storeLog } from "../../observe/logs/log-layout.ts";
import type { LogEntry, LogSink } from "../../store/ports.ts";
import type { FolderBlobs } from "./folder-blobs.ts";
import type { WorkerRecords } from "./worker-records.ts";

/**
 * The log sink of the local platform: the record goes to the storage thread (worker-records.ts), which
 * inserts it into logs.db and produces its deferred bodies there (a streamed answer is assembled off the event
 * loop); large bodies are written to the blob folder first, from here. Reads use `records`, whose reads run on
 * a main-thread connection to logs.db.
 */
export class ThreadLogSink implements LogSink {
  readonly records: WorkerRecords;
  readonly #blobs: FolderBlobs;

  constructor(records: WorkerRecords, blobs: FolderBlobs) {
    this.records = records;
    this.#blobs = blobs;
  }

  write(entry: LogEntry): Promise<void> {
    // The storage thread produces deferred bodies itself (late-attributes.ts).
    return storeLog(this.records, this.#blobs, entry, false);
  }
}

import type { Blobs, Records, LogEntry, LogSink } from "../../store/ports.ts";
import { storeLog } from "./log-layout.ts";

/**
 * The log sink of the AWS platform (and of any Records + Blobs pair): deferred bodies are resolved on the
 * event loop, after the response; the record is one DynamoDB PutItem, after one S3 PutObject for large bodies.
 */
export class RecordsLogSink implements LogSink {
  readonly records: Records;
  readonly #blobs: Blobs;

  constructor(records: Records, blobs: Blobs) {
    this.records = records;
    this.#blobs = blobs;
  }

  write(entry: LogEntry): Promise<void> {
    // DynamoDB takes plain values only: deferred bodies are resolved here.
    return storeLog(this.records, this.#blobs, entry, true);
  }
}

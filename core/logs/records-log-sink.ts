import type { Blobs, Records } from "../store/ports.ts";
import { layoutLog, resolveLateJson } from "./log-layout.ts";
import type { LogEntry, LogSink } from "./log-sink.ts";

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

  /** Not async: the item is built at once, so the caller may drop the log's bodies as soon as this returns. */
  write(entry: LogEntry): Promise<void> {
    try {
      const { item, blob } = layoutLog(entry);
      // DynamoDB takes plain values only.
      item.requestBody = resolveLateJson(item.requestBody);
      item.responseBody = resolveLateJson(item.responseBody);
      if (!blob) return this.records.put(item);
      return this.#blobs
        .put(blob.key, blob.json, { contentType: "application/json" })
        .then(() => this.records.put(item));
    } catch (error) {
      return Promise.reject(error);
    }
  }
}

import type { Blobs, Records, LogEntry, LogSink, RecordItem } from "../../store/ports.ts";
import { indexEntries, searchIndexItems } from "./index-items.ts";
import { layoutLog, plainJson, resolveLateJson, storeLayout } from "./log-layout.ts";
import { type LogSearch, type LogSearchPage, logFacts } from "./log-search.ts";

/** Logs read by id at a time once a page's entries are known. */
const LOAD_CONCURRENCY = 32;

/**
 * The log sink of any Records + Blobs pair (the AWS platform's: DynamoDB and S3). A log is its record
 * (`LOG#<id>`, log-layout.ts) and its search index items beside it (index-items.ts). Each is a single-item
 * write, so no transaction is needed: a log whose items were not all written makes the write fail (the breaker
 * counts it). `putItems` writes a log's items and `loadRecords` reads the records a search found; a platform
 * may batch them (the AWS adapter: BatchWriteItem, BatchGetItem).
 */
export class RecordsLogSink implements LogSink {
  readonly records: Records;
  readonly #blobs: Blobs;

  constructor(records: Records, blobs: Blobs) {
    this.records = records;
    this.#blobs = blobs;
  }

  write(entry: LogEntry): Promise<void> {
    try {
      const layout = layoutLog(entry);
      // Records take plain values only (DynamoDB): deferred bodies are resolved here, after the response, and
      // objects that say how they serialise (a multipart request's UploadedFile) stored as that.
      layout.item.requestBody = plainJson(resolveLateJson(layout.item.requestBody));
      layout.item.responseBody = plainJson(resolveLateJson(layout.item.responseBody));
      const facts = logFacts(entry.log);
      return storeLayout(this.#blobs, layout, (item) => this.putItems([item, ...indexEntries(facts, item.ttl)]));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Writes a log's record and index entries (each on its own). */
  protected async putItems(items: RecordItem[]): Promise<void> {
    await Promise.all(items.map((item) => this.records.put(item)));
  }

  search(search: LogSearch): Promise<LogSearchPage> {
    return searchIndexItems(this.records, search, (keys) => this.loadRecords(keys));
  }

  /** Records by key, in the keys' order (undefined: absent); a platform may batch the reads (BatchGetItem). */
  protected async loadRecords(keys: Array<{ pk: string; sk: string }>): Promise<Array<RecordItem | undefined>> {
    const items: Array<RecordItem | undefined> = [];
    for (let start = 0; start < keys.length; start += LOAD_CONCURRENCY) {
      const slice = keys.slice(start, start + LOAD_CONCURRENCY);
      items.push(...(await Promise.all(slice.map(({ pk, sk }) => this.records.get(pk, sk)))));
    }
    return items;
  }
}

import type { Blobs, RecordItem, Records } from "../store/ports.ts";
import { collectMatches, type IndexEntry } from "./index-scan.ts";
import { indexTerms, searchTerm } from "./index-terms.ts";
import { logKey } from "./log-keys.ts";
import { layoutLog, resolveLateJson, storedLog, storeLayout } from "./log-layout.ts";
import type { RequestLog } from "./log-record.ts";
import {
  cursorPosition,
  type LogFacts,
  type LogSearch,
  type LogSearchPage,
  logFacts,
  withoutBodies,
} from "./log-search.ts";
import type { LogEntry, LogSink } from "./log-sink.ts";

/** Partition of one index term's entries (index-terms.ts); their sort key is the log's `<createdAt>#<id>`. */
const termPartition = (term: string) => `LOGX#${term}`;
/** Above every id character: `<time>#~` sorts after every entry of that millisecond. */
const AFTER_IDS = "~";
/** An entry's sort key: `<createdAt>#<id>`. */
const POSITION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z#[^#]{1,256}$/;
/** Records.query answers at most 1000 items; one is asked for beyond the batch (the cursor's own entry). */
const MAX_BATCH = 999;
/** Logs read by id at a time once a page's entries are known. */
const LOAD_CONCURRENCY = 32;

/**
 * The log sink of any Records + Blobs pair (the AWS platform's: DynamoDB and S3). A log is its record
 * (`LOG#<id>`, log-layout.ts) and one index entry per term it has (index-terms.ts): pk `LOGX#<term>`, sk
 * `<createdAt>#<id>`, the log's facts (the fields searches filter on), the log's ttl. Each is a single-item
 * write, so no transaction is needed: an entry whose record is missing is skipped by searches, and a log whose
 * entries were not all written makes the write fail (the breaker counts it).
 *
 * A search walks one term's entries newest first from a keyset position (index-scan.ts), checks every condition
 * on their facts, then reads the matching records by key. `putItems` writes a log's items; a platform may
 * batch them (the AWS adapter: BatchWriteItem).
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
      // Records take plain values only (DynamoDB): deferred bodies are resolved here, after the response.
      layout.item.requestBody = resolveLateJson(layout.item.requestBody);
      layout.item.responseBody = resolveLateJson(layout.item.responseBody);
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

  async search(search: LogSearch): Promise<LogSearchPage> {
    if (search.cursor !== undefined && !POSITION.test(cursorPosition(search.cursor))) {
      throw new RangeError("invalid cursor");
    }
    if (search.from > search.to) return { items: [] };
    const { term, exact } = searchTerm(search);
    const partition = termPartition(term);
    const batch = Math.min(MAX_BATCH, exact ? search.limit : Math.max(search.limit * 4, 200));
    const { matched, cursor } = await collectMatches(
      search,
      async (after, count) => {
        const lowest = `${search.from}#`;
        // A cursor below the search's range (made by another search): nothing more to read.
        if (after !== undefined && after < lowest) return { entries: [], next: undefined };
        const page = await this.records.query({
          partition,
          from: lowest,
          to: after ?? `${search.to}#${AFTER_IDS}`,
          order: "desc",
          limit: count + 1,
        });
        // The upper bound is inclusive: the cursor's own entry comes back first.
        const items = page.items.filter((item) => after === undefined || item.sk < after);
        const entries = items.slice(0, count).map(toEntry);
        const more = page.cursor !== undefined || items.length > count;
        return { entries, next: more ? entries.at(-1)?.position : undefined };
      },
      batch,
    );
    return { items: await this.#load(matched), cursor };
  }

  /** The entries' logs, in their order (a record gone meanwhile is left out), without their bodies. */
  async #load(entries: IndexEntry[]): Promise<RequestLog[]> {
    const items = await this.loadRecords(entries.map((entry) => logKey(entry.facts!.id)));
    return items.flatMap((item) => (item ? [withoutBodies(storedLog(item))] : []));
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

/** The index entries of a log (index-terms.ts), expiring with it. */
export function indexEntries(facts: LogFacts, ttl: unknown): RecordItem[] {
  const sk = `${facts.createdAt}#${facts.id}`;
  return indexTerms(facts).map((term) => ({
    pk: termPartition(term),
    sk,
    ...(typeof ttl === "number" ? { ttl } : {}),
    log: facts,
  }));
}

function toEntry(item: RecordItem): IndexEntry {
  return { position: item.sk, facts: item.log as LogFacts };
}

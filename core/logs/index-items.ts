import type { RecordItem, Records } from "../store/ports.ts";
import { collectMatches, type IndexEntry } from "./index-scan.ts";
import { indexTerms, searchTerm } from "./index-terms.ts";
import { logKey } from "./log-keys.ts";
import { storedLog } from "./log-layout.ts";
import type { RequestLog } from "./log-record.ts";
import { cursorPosition, type LogFacts, type LogSearch, type LogSearchPage, withoutBodies } from "./log-search.ts";

/**
 * The search index of the store families that keep it as Records items beside the logs (AWS: DynamoDB; MySQL):
 * one item per term a log has (index-terms.ts), pk `LOGX#<term>`, sk `<createdAt>#<id>`, the log's facts (the
 * fields searches filter on) and the log's ttl. Each item is written on its own (no transaction): an entry
 * whose record is missing is skipped by searches.
 */

/** Partition of one index term's entries; their sort key is the log's `<createdAt>#<id>`. */
const termPartition = (term: string) => `LOGX#${term}`;
/** Above every id character: `<time>#~` sorts after every entry of that millisecond. */
const AFTER_IDS = "~";
/** An entry's sort key: `<createdAt>#<id>`. */
const POSITION = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z#[^#]{1,256}$/;
/** Records.query answers at most 1000 items; one is asked for beyond the batch (the cursor's own entry). */
const MAX_BATCH = 999;

/** The index items of a log, expiring with it. */
export function indexEntries(facts: LogFacts, ttl: unknown): RecordItem[] {
  const sk = `${facts.createdAt}#${facts.id}`;
  return indexTerms(facts).map((term) => ({
    pk: termPartition(term),
    sk,
    ...(typeof ttl === "number" ? { ttl } : {}),
    log: facts,
  }));
}

/** Reads log records by key, in the keys' order (undefined: absent or expired). */
export type LoadRecords = (keys: Array<{ pk: string; sk: string }>) => Promise<Array<RecordItem | undefined>>;

/**
 * A search (log-search.ts) through the index items: walks one term's entries newest first from a keyset
 * position (index-scan.ts), checks every condition on their facts, then reads the matching records by key.
 */
export async function searchIndexItems(
  records: Records,
  search: LogSearch,
  loadRecords: LoadRecords,
): Promise<LogSearchPage> {
  if (search.cursor !== undefined && !POSITION.test(cursorPosition(search.cursor))) {
    throw new RangeError("invalid cursor");
  }
  if (search.from > search.to) return { items: [] };
  const { term, exact } = searchTerm(search);
  const partition = termPartition(term);
  const lowest = `${search.from}#`;
  const batch = Math.min(MAX_BATCH, exact ? search.limit : Math.max(search.limit * 4, 200));
  const { matched, cursor } = await collectMatches(
    search,
    async (after, count) => {
      // A cursor below the search's range (made by another search): nothing more to read.
      if (after !== undefined && after < lowest) return { entries: [], next: undefined };
      const page = await records.query({
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
  return { items: await load(matched, loadRecords), cursor };
}

/** The entries' logs, in their order (a record gone meanwhile is left out), without their bodies. */
async function load(entries: IndexEntry[], loadRecords: LoadRecords): Promise<RequestLog[]> {
  const items = await loadRecords(entries.map((entry) => logKey(entry.facts!.id)));
  return items.flatMap((item) => (item ? [withoutBodies(storedLog(item))] : []));
}

function toEntry(item: RecordItem): IndexEntry {
  return { position: item.sk, facts: item.log as LogFacts };
}

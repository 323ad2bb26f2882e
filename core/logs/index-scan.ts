import {
  cursorPosition,
  type LogFacts,
  type LogSearch,
  MAX_EXAMINED,
  MAX_SEARCH_LIMIT,
  matchesSearch,
  SEARCH_TIME_BUDGET_MS,
  searchCursor,
} from "./log-search.ts";

/** One entry of the index a search walks: where it stands, and the facts of its log (undefined: expired). */
export interface IndexEntry {
  position: string;
  facts: LogFacts | undefined;
}

/**
 * Reads up to `count` entries of the search's index, newest first, strictly after `after` (a position this
 * family made; undefined: from the search's upper time bound). `next` is where reading would go on, undefined
 * once the index holds nothing more in the search's time range. A position the family cannot have made throws
 * RangeError.
 */
export type ReadIndex = (
  after: string | undefined,
  count: number,
) => Promise<{ entries: IndexEntry[]; next: string | undefined }>;

/**
 * The walk every family's search makes (log-search.ts): reads the index the family chose for the search in
 * batches, keeps the entries whose facts match every condition, and stops at `limit` matches, at the end of the
 * index, or once it has read its share (`maxExamined` entries, SEARCH_TIME_BUDGET_MS), answering the position
 * reached as the cursor. `batch`: entries per read, the limit itself when the index alone decides (no entry
 * is then read for nothing).
 */
export async function collectMatches(
  search: LogSearch,
  read: ReadIndex,
  batch: number,
): Promise<{ matched: IndexEntry[]; cursor?: string }> {
  const limit = Math.max(1, Math.min(search.limit, MAX_SEARCH_LIMIT));
  const maxExamined = Math.max(1, Math.min(search.maxExamined ?? MAX_EXAMINED, MAX_EXAMINED));
  const deadline = Date.now() + SEARCH_TIME_BUDGET_MS;
  let after = search.cursor === undefined ? undefined : cursorPosition(search.cursor);
  if (search.from > search.to) return { matched: [] };
  let examined = 0;
  const matched: IndexEntry[] = [];
  for (;;) {
    const count = Math.max(1, Math.min(batch, maxExamined - examined));
    const { entries, next } = await read(after, count);
    examined += count;
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!;
      if (!entry.facts || !matchesSearch(entry.facts, search)) continue;
      matched.push(entry);
      if (matched.length === limit) {
        const more = next !== undefined || i < entries.length - 1;
        return { matched, cursor: more ? searchCursor(entry.position) : undefined };
      }
    }
    if (next === undefined) return { matched };
    after = next;
    if (examined >= maxExamined || Date.now() >= deadline) return { matched, cursor: searchCursor(after) };
  }
}

import type { RequestLog } from "./log-record.ts";

/**
 * One search of request logs (GET /v1/logs, a trace, an export), as every LogSink answers it (log-sink.ts).
 * Each store family keeps an index of the fields below beside the logs and seeks it: a search reads a bounded
 * number of index entries (`maxExamined`), never the whole organisation, and pages continue from a keyset
 * cursor the store seeks to rather than re-reading what came before.
 */
export interface LogSearch {
  organisationId: string;
  /** Exact: a workspace key's searches always carry its workspace; without one, every workspace's logs. */
  workspaceId?: string;
  /** Inclusive bounds of `createdAt`, ISO instants. */
  from: string;
  to: string;
  traceId?: string;
  apiKeyId?: string;
  userId?: string;
  status?: number;
  provider?: string;
  /** The requested or the answered model. */
  model?: string;
  metadataKey?: string;
  /** Only with metadataKey: the key must have this value. */
  metadataValue?: string;
  /** Cost bounds (USD, a log without cost counts as 0): checked on the entries read, not indexed. */
  minCost?: number;
  maxCost?: number;
  /** Most logs answered, 1..MAX_SEARCH_LIMIT. */
  limit: number;
  /** From the previous page of the same search (searchCursor); a cursor the family did not make: RangeError. */
  cursor?: string;
  /** Most index entries read by this call (default and ceiling MAX_EXAMINED); tests lower it. */
  maxExamined?: number;
}

/**
 * Logs newest first (`createdAt`, then an order of the family's choosing among equal times), without their
 * bodies (`requestBody`, `responseBody`, `bodiesKey`). A page may hold fewer than `limit` logs, none even, and
 * still have a `cursor`: the search stopped after reading its share of the index. Only a page without
 * a cursor is the last.
 */
export interface LogSearchPage {
  items: RequestLog[];
  cursor?: string;
}

export const MAX_SEARCH_LIMIT = 1000;
/**
 * Index entries one search call reads at most: a few milliseconds of work in every family, whatever the filter
 * and however many logs the organisation has.
 */
export const MAX_EXAMINED = 5000;
/** Wall time after which a search answers what it found (with a cursor), even before MAX_EXAMINED. */
export const SEARCH_TIME_BUDGET_MS = 1000;

/** The fields a search filters on: what every index entry carries (or lets the family read at once). */
export type LogFacts = Pick<
  RequestLog,
  | "id"
  | "createdAt"
  | "organisationId"
  | "workspaceId"
  | "traceId"
  | "apiKeyId"
  | "userId"
  | "status"
  | "provider"
  | "requestedModel"
  | "answeredModel"
  | "metadata"
  | "cost"
>;

export function logFacts(log: RequestLog): LogFacts {
  return {
    id: log.id,
    createdAt: log.createdAt,
    organisationId: log.organisationId,
    workspaceId: log.workspaceId,
    traceId: log.traceId,
    apiKeyId: log.apiKeyId,
    userId: log.userId,
    status: log.status,
    provider: log.provider,
    requestedModel: log.requestedModel,
    answeredModel: log.answeredModel,
    metadata: log.metadata,
    cost: log.cost,
  };
}

/**
 * Whether a log answers the search: every condition, the organisation and workspace included, whichever index
 * found it. The index narrows what is read; this decides, so isolation never rests on an index's key alone.
 */
export function matchesSearch(log: LogFacts, search: LogSearch): boolean {
  if (log.organisationId !== search.organisationId) return false;
  if (search.workspaceId !== undefined && log.workspaceId !== search.workspaceId) return false;
  if (log.createdAt < search.from || log.createdAt > search.to) return false;
  if (search.traceId !== undefined && log.traceId !== search.traceId) return false;
  if (search.apiKeyId !== undefined && log.apiKeyId !== search.apiKeyId) return false;
  if (search.userId !== undefined && log.userId !== search.userId) return false;
  if (search.status !== undefined && log.status !== search.status) return false;
  if (search.provider !== undefined && log.provider !== search.provider) return false;
  if (search.model !== undefined && log.requestedModel !== search.model && log.answeredModel !== search.model)
    return false;
  if (search.metadataKey !== undefined) {
    const value = log.metadata?.[search.metadataKey];
    if (typeof value !== "string") return false;
    if (search.metadataValue !== undefined && value !== search.metadataValue) return false;
  }
  if (search.minCost !== undefined && (log.cost ?? 0) < search.minCost) return false;
  if (search.maxCost !== undefined && (log.cost ?? 0) > search.maxCost) return false;
  return true;
}

/**
 * How many conditions a search has beyond its organisation, workspace and time range: an index holding one of
 * them decides alone (every entry it gives matches) when it is the only one.
 */
export function conditionCount(search: LogSearch): number {
  const conditions = [search.traceId, search.apiKeyId, search.userId, search.status, search.provider, search.model];
  conditions.push(search.metadataKey, search.minCost, search.maxCost);
  return conditions.filter((condition) => condition !== undefined).length;
}

/** A log as searches answer it: without its bodies (read them one log at a time, RequestLogger.get). */
export function withoutBodies(log: RequestLog): RequestLog {
  const { requestBody, responseBody, bodiesKey, ...summary } = log;
  return summary;
}

/** The cursor of a page: the position (in the family's own terms) of the last index entry the search read. */
export function searchCursor(position: string): string {
  return Buffer.from(JSON.stringify({ after: position })).toString("base64url");
}

/** The position a cursor made by searchCursor names; RangeError (answered 400) for anything else. */
export function cursorPosition(cursor: string): string {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
    if (typeof value?.after === "string" && value.after.length > 0 && value.after.length <= 4096) return value.after;
  } catch {
    // fall through
  }
  throw new RangeError("invalid cursor");
}

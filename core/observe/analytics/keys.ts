import { TtlCache } from "../../util/ttl-cache.ts";

/**
 * Storage layout of the analytics aggregates (see core/observe/analytics/counting.ts for what is written when).
 *
 * Counters (Counters port), one per (scope, time bucket, field):
 * - a cell is (organisation, bucket, workspace, provider, model); fields `n` requests, `e` errors, `c` cost in
 *   micro-dollars, `p` prompt tokens, `o` completion tokens, `h` cache hits, `s` cost saved by
 *   cache hits in micro-dollars, `l<b>` the latency sketch (one
 *   counter per log bucket b = ceil(ln(ms) / ln(1.1)));
 * - the workspace cell (provider and model `*`): `u` distinct users, `fn` feedback count, `fv` sum of
 *   value x weight and `fw` sum of weights (both x 1e6, so counters stay integers);
 * - group counters per day: users (`u`) and metadata pairs (`m:<key>`), fields `n` and `c`; guardrails (`g`, by
 *   guardrail id), fields `n` runs, `f` failed, `d` denied, `k` checks run, `x` checks failed, `t` time in µs;
 * - `#` counters: how many distinct cells / users / metadata values a workspace has in a day (the cap).
 * Buckets: `h<yyyy-mm-ddThh>` (UTC hour) and `d<yyyy-mm-dd>` (UTC day).
 *
 * Counters cannot be listed, so which cells, users, metadata values, workspaces and latency buckets exist in
 * a day is kept in Records: partition `ANIDX#<org>#<yyyy-mm-dd>`, one small item per entry (sort keys
 * `c|ws|provider|model`, `l|ws|provider|model|b`, `u|ws|user`, `m|ws|key|value`, `g|ws|guardrail`, `w|ws`), written only the
 * first time the entry appears that day. A read lists a day's entries with one query, then reads exactly the
 * counters it needs with Counters.getMany.
 */

export const NO_VALUE = "_";
export const ALL = "*";
export const OTHER = "other";

/** Hourly counters live long enough for any hourly graph (ranges up to 2 days in the last month). */
export const HOURLY_RETENTION_DAYS = 35;
/** Daily counters and the day index. */
export const DAILY_RETENTION_DAYS = 400;

/** Distinct values kept per workspace and day before the rest is counted as `other`. */
export const CELL_CAP = 200;
export const USER_CAP = 1000;
export const METADATA_CAP = 500;
export const GUARDRAIL_CAP = 200;
/** Metadata pairs of one request that are counted (the rest are ignored by analytics). */
export const METADATA_PAIRS_PER_REQUEST = 8;

/** Characters of a value kept in a key (store keys are bounded; longer values share their first ones). */
export const MAX_KEY_PART_CHARS = 256;

/**
 * Key parts are encoded on every request for the same few organisations, workspaces, providers and models:
 * the encodings are remembered (bounded by entries and bytes: values come from callers).
 */
const encodedParts = new TtlCache<string, string>({
  ttlMs: Number.POSITIVE_INFINITY,
  maxEntries: 10_000,
  maxBytes: 8 * 1024 * 1024,
  sizeOf: (value, encoded) => 96 + (value.length + encoded.length) * 2,
});
function part(value: string): string {
  let encoded = encodedParts.get(value);
  if (encoded === undefined) {
    // toWellFormed: a lone surrogate (which encodeURIComponent refuses with a URIError) becomes U+FFFD.
    encoded = encodeURIComponent(value.slice(0, MAX_KEY_PART_CHARS).toWellFormed());
    encodedParts.set(value, encoded);
  }
  return encoded;
}

const HOUR_MS = 3_600_000;
/** The ISO text of the last hour asked for (nearly every request of an hour asks for the same). */
let lastHour = { start: Number.NaN, iso: "" };
function hourIso(timeMs: number): string {
  const start = Math.floor(timeMs / HOUR_MS) * HOUR_MS;
  if (start !== lastHour.start) lastHour = { start, iso: new Date(start).toISOString() };
  return lastHour.iso;
}

/** The hour a time falls in, as a number: cheaper to compare than its bucket's text. */
export const hourNumber = (timeMs: number) => Math.floor(timeMs / HOUR_MS);

export const hourBucket = (timeMs: number) => `h${hourIso(timeMs).slice(0, 13)}`;
export const dayBucket = (timeMs: number) => `d${hourIso(timeMs).slice(0, 10)}`;

export interface Cell {
  workspace: string;
  provider: string;
  model: string;
}

/** A cell's keys without their field: `cellPrefix(...) + field` is `cellKey(...)` (for a cell's many fields). */
export const cellPrefix = (org: string, bucket: string, cell: Cell) =>
  `an|${part(org)}|${bucket}|${part(cell.workspace)}|${part(cell.provider)}|${part(cell.model)}|`;

export const cellKey = (org: string, bucket: string, cell: Cell, field: string) =>
  cellPrefix(org, bucket, cell) + field;

export const workspaceKey = (org: string, bucket: string, workspace: string, field: string) =>
  cellKey(org, bucket, { workspace, provider: ALL, model: ALL }, field);

export const groupKey = (
  org: string,
  bucket: string,
  workspace: string,
  dimension: string,
  value: string,
  field: string,
) => `ag|${part(org)}|${bucket}|${part(workspace)}|${part(dimension)}|${part(value)}|${field}`;

export const distinctKey = (org: string, bucket: string, workspace: string, dimension: string) =>
  `an|${part(org)}|${bucket}|${part(workspace)}|#|${dimension}`;

export const indexPartition = (org: string, day: string) => `ANIDX#${org}#${day}`;

export const indexSort = (...parts: string[]) => parts.map(part).join("|");

export function parseIndexSort(sk: string): string[] {
  return sk.split("|").map(decodeURIComponent);
}

/** The latency sketch: log buckets of ratio 1.1 (relative error under 5%). */
const LOG_RATIO = Math.log(1.1);
export const latencyBucket = (ms: number) => (ms <= 1 ? 0 : Math.ceil(Math.log(ms) / LOG_RATIO));
/** A representative latency of a bucket: the geometric middle of (1.1^(b-1), 1.1^b]. */
export const bucketLatency = (bucket: number) => (bucket <= 0 ? 1 : 1.1 ** (bucket - 0.5));

/** p-quantiles (0..1) of a merged sketch: bucket -> count. */
export function percentiles(sketch: Map<number, number>, quantiles: number[]): Array<number | null> {
  const buckets = [...sketch].filter(([, count]) => count > 0).sort((a, b) => a[0] - b[0]);
  const total = buckets.reduce((sum, [, count]) => sum + count, 0);
  if (total === 0) return quantiles.map(() => null);
  return quantiles.map((quantile) => {
    const rank = Math.max(1, Math.ceil(quantile * total));
    let seen = 0;
    for (const [bucket, count] of buckets) {
      seen += count;
      if (seen >= rank) return Math.round(bucketLatency(bucket) * 10) / 10;
    }
    return Math.round(bucketLatency(buckets.at(-1)![0]) * 10) / 10;
  });
}

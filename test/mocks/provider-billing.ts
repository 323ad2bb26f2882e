import type { RecordedRequest } from "../helpers/mock-server.ts";

/**
 * The providers' cost reports, as their documentation describes them:
 * - OpenAI's organization costs API, `GET /v1/organization/costs` (Bearer admin key): `start_time` (Unix seconds,
 *   inclusive), `end_time` (exclusive), `bucket_width=1d`, `limit` (1..180, default 7) and `page` (the previous
 *   answer's `next_page`); answers `{object: "page", data: [{object: "bucket", start_time, end_time, results:
 *   [{object: "organization.costs.result", amount: {value, currency: "usd"}, line_item, project_id}]}], has_more,
 *   next_page}`;
 * - Anthropic's Admin API cost report, `GET /v1/organizations/cost_report` (`x-api-key` admin key,
 *   `anthropic-version`): `starting_at` / `ending_at` (RFC 3339), `bucket_width=1d`, `limit` (1..31, default 7),
 *   `page`; answers `{data: [{starting_at, ending_at, results: [{amount: "<cents as a decimal string>",
 *   currency: "USD", ...}]}], has_more, next_page}`.
 * The days' amounts (USD) are the test's to set; a wrong admin key is answered 401.
 */

export interface BillingState {
  adminKey: string;
  /** USD per UTC day (`yyyy-mm-dd`). */
  days: Map<string, number>;
}

const DAY_S = 86_400;

/** The answer to a cost report request, or undefined for any other request (left to the provider mock). */
export function billingAnswer(state: BillingState) {
  return (request: RecordedRequest): { status: number; body: unknown } | undefined => {
    const url = new URL(request.path, "http://mock");
    if (url.pathname.endsWith("/organization/costs")) {
      if (request.headers.authorization !== `Bearer ${state.adminKey}`) {
        return {
          status: 401,
          body: { error: { message: "Invalid admin key", type: "invalid_request_error", code: null } },
        };
      }
      const start = Number(url.searchParams.get("start_time"));
      const end = Number(url.searchParams.get("end_time") ?? start + 7 * DAY_S);
      const limit = Number(url.searchParams.get("limit") ?? 7);
      const { buckets, next } = page(start, end, limit, url.searchParams.get("page"), DAY_S);
      return {
        status: 200,
        body: {
          object: "page",
          data: buckets.map((at) => ({
            object: "bucket",
            start_time: at,
            end_time: at + DAY_S,
            results: amountsOf(state, at).map((usd) => ({
              object: "organization.costs.result",
              amount: { value: usd, currency: "usd" },
              line_item: null,
              project_id: null,
            })),
          })),
          has_more: next !== null,
          next_page: next,
        },
      };
    }
    if (url.pathname.endsWith("/v1/organizations/cost_report")) {
      if (request.headers["x-api-key"] !== state.adminKey || !request.headers["anthropic-version"]) {
        return {
          status: 401,
          body: { type: "error", error: { type: "authentication_error", message: "invalid x-api-key" } },
        };
      }
      const start = Date.parse(url.searchParams.get("starting_at") ?? "") / 1000;
      const endText = url.searchParams.get("ending_at");
      const end = endText ? Date.parse(endText) / 1000 : start + 7 * DAY_S;
      const limit = Number(url.searchParams.get("limit") ?? 7);
      const { buckets, next } = page(start, end, limit, url.searchParams.get("page"), DAY_S);
      return {
        status: 200,
        body: {
          data: buckets.map((at) => ({
            starting_at: new Date(at * 1000).toISOString().replace(".000Z", "Z"),
            ending_at: new Date((at + DAY_S) * 1000).toISOString().replace(".000Z", "Z"),
            // Cents, as a decimal string: two results a day to show they add up.
            results: amountsOf(state, at).map((usd) => ({
              amount: (usd * 100).toFixed(5),
              currency: "USD",
              cost_type: null,
              description: null,
              model: null,
              service_tier: null,
              token_type: null,
              context_window: null,
              workspace_id: null,
            })),
          })),
          has_more: next !== null,
          next_page: next,
        },
      };
    }
    return undefined;
  };
}

/** A day's amount split in two results (as a grouped report would list them). */
function amountsOf(state: BillingState, at: number): number[] {
  const usd = state.days.get(new Date(at * 1000).toISOString().slice(0, 10)) ?? 0;
  return usd === 0 ? [] : [usd * 0.25, usd * 0.75];
}

/** The day buckets of [start, end) from the cursor on, `limit` a page; the cursor is the next bucket's start. */
function page(start: number, end: number, limit: number, cursor: string | null, width: number) {
  const first = cursor ? Number(Buffer.from(cursor, "base64url").toString()) : Math.floor(start / width) * width;
  const buckets: number[] = [];
  for (let at = first; at < end && buckets.length < limit; at += width) buckets.push(at);
  const after = first + buckets.length * width;
  return { buckets, next: after < end ? Buffer.from(String(after)).toString("base64url") : null };
}

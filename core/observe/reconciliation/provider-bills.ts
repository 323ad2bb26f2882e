import { requestUpstream } from "../../providers/upstream/client.ts";
import type { TrustedHosts } from "../../security/custom-host.ts";
export { BILLED_PROVIDERS } from "./reconciliation-index.ts";

/**
 * What a provider billed per UTC day, read with the provider's admin key from its own cost report:
 * - OpenAI's organization costs API: `GET /v1/organization/costs?start_time&end_time&bucket_width=1d&limit&page`
 *   (Bearer admin key): pages of daily buckets, each with results whose `amount.value` is in dollars;
 * - Anthropic's cost report (Admin API): `GET /v1/organizations/cost_report?starting_at&ending_at&bucket_width=1d
 *   &limit&page` (`x-api-key` admin key, `anthropic-version`): daily buckets whose results' `amount` is a decimal
 *   string in cents.
 * Both page with `has_more` and `next_page`. The bill is the whole organisation's (or project's) spend with the
 * provider: docs/observability.md says how to keep the gateway's traffic apart.
 */

export interface BillRequest {
  provider: string;
  adminKey: string;
  /** The integration's custom host (tests, proxies); else the provider's API. */
  customHost?: string;
  /** UTC days, `yyyy-mm-dd`, from (inclusive) to (exclusive). */
  from: string;
  to: string;
  trusted: TrustedHosts;
  signal: AbortSignal;
}

const TIMEOUT_MS = 30_000;
/** A bound on the pages read for one range (a week is one page; a misbehaving cursor stops here). */
const MAX_PAGES = 20;

export async function readBill(request: BillRequest): Promise<Map<string, number>> {
  if (request.provider === "openai") return openAiBill(request);
  if (request.provider === "anthropic") return anthropicBill(request);
  throw new Error(`No cost report reader for provider '${request.provider}'.`);
}

async function openAiBill(request: BillRequest): Promise<Map<string, number>> {
  const base = (request.customHost ?? "https://api.openai.com/v1").replace(/\/+$/, "");
  const days = new Map<string, number>();
  const params = new URLSearchParams({
    start_time: String(Date.parse(`${request.from}T00:00:00Z`) / 1000),
    end_time: String(Date.parse(`${request.to}T00:00:00Z`) / 1000),
    bucket_width: "1d",
    limit: "31",
  });
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await getJson(
      `${base}/organization/costs?${params}`,
      { authorization: `Bearer ${request.adminKey}` },
      request,
    );
    for (const bucket of arrayOf(answer.data)) {
      const day = new Date(Number(bucket?.start_time) * 1000).toISOString().slice(0, 10);
      let usd = days.get(day) ?? 0;
      for (const result of arrayOf(bucket?.results)) usd += finite(result?.amount?.value);
      days.set(day, usd);
    }
    if (!answer.has_more || typeof answer.next_page !== "string") break;
    params.set("page", answer.next_page);
  }
  return days;
}

async function anthropicBill(request: BillRequest): Promise<Map<string, number>> {
  const base = (request.customHost ?? "https://api.anthropic.com").replace(/\/+$/, "").replace(/\/v1$/, "");
  const days = new Map<string, number>();
  const params = new URLSearchParams({
    starting_at: `${request.from}T00:00:00Z`,
    ending_at: `${request.to}T00:00:00Z`,
    bucket_width: "1d",
    limit: "31",
  });
  const headers = { "x-api-key": request.adminKey, "anthropic-version": "2023-06-01" };
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await getJson(`${base}/v1/organizations/cost_report?${params}`, headers, request);
    for (const bucket of arrayOf(answer.data)) {
      const day = String(bucket?.starting_at ?? "").slice(0, 10);
      if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) continue;
      let usd = days.get(day) ?? 0;
      // Cents as a decimal string ("123.45" is $1.23).
      for (const result of arrayOf(bucket?.results)) usd += finite(Number(result?.amount)) / 100;
      days.set(day, usd);
    }
    if (!answer.has_more || typeof answer.next_page !== "string") break;
    params.set("page", answer.next_page);
  }
  return days;
}

async function getJson(url: string, headers: Record<string, string>, request: BillRequest): Promise<any> {
  const reply = await requestUpstream(
    { url, method: "GET", headers: { accept: "application/json", ...headers } },
    { timeoutMs: TIMEOUT_MS, signal: request.signal, trusted: request.trusted },
  );
  const text = await reply.text();
  if (reply.status !== 200)
    throw new Error(`${request.provider} cost report answered ${reply.status}: ${text.slice(0, 200)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`${request.provider} cost report answered malformed JSON`);
  }
}

const arrayOf = (value: unknown): any[] => (Array.isArray(value) ? value : []);
const finite = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

import type { Cost } from "../catalog/cost.ts";

/**
 * The request's cost as the client sees it: headers on a JSON answer (the total and its main components, USD),
 * and on a stream the usage it reports (`usage.cost` and `usage.cost_details`, as OpenRouter's answers carry
 * them): the final usage chunk of a chat stream with `stream_options.include_usage`, Responses'
 * `response.completed`. A request without a known price says so (`x-gateway-cost-priced: false`), never `0`.
 */

export const COST_HEADERS = {
  total: "x-gateway-cost",
  input: "x-gateway-cost-input",
  output: "x-gateway-cost-output",
  cacheRead: "x-gateway-cost-cache-read",
  cacheWrite: "x-gateway-cost-cache-write",
  reasoning: "x-gateway-cost-reasoning",
  priced: "x-gateway-cost-priced",
  source: "x-gateway-cost-source",
  /** A cache hit costs nothing: what the provider's answer cost when it was made. */
  saved: "x-gateway-cost-saved",
} as const;

const usd = (value: number) => String(Number(value.toPrecision(12)));

export function costHeaders(cost: Cost | undefined, savedOnHit?: number): Record<string, string> {
  const headers: Record<string, string> = {};
  if (savedOnHit !== undefined) headers[COST_HEADERS.saved] = usd(savedOnHit);
  if (!cost) return headers;
  if (!cost.priced) {
    headers[COST_HEADERS.priced] = "false";
    return headers;
  }
  headers[COST_HEADERS.total] = usd(cost.total);
  headers[COST_HEADERS.input] = usd(cost.input);
  headers[COST_HEADERS.output] = usd(cost.output);
  const components = cost.components ?? {};
  if (components.cache_read) headers[COST_HEADERS.cacheRead] = usd(components.cache_read);
  const writes = (components.cache_write ?? 0) + (components.cache_write_1h ?? 0);
  if (writes) headers[COST_HEADERS.cacheWrite] = usd(writes);
  if (components.output_reasoning) headers[COST_HEADERS.reasoning] = usd(components.output_reasoning);
  if (cost.source) headers[COST_HEADERS.source] = sourceLabel(cost.source);
  return headers;
}

/** `@pydantic/genai-prices 0.1.8 (2026-09-23)`, `+override` when an admin's price took part (ASCII only). */
export function sourceLabel(source: NonNullable<Cost["source"]>): string {
  const label = [source.name, source.version, source.date && `(${source.date})`].filter(Boolean).join(" ");
  return (source.override ? `${label} +override` : label).replace(/[^\x20-\x7e]/g, "?");
}

/** A usage object with its cost: `cost` (USD) and `cost_details` (USD per component), when priced. */
export function usageWithCost<T extends object>(usage: T, cost: Cost): T {
  if (!cost.priced) return usage;
  return { ...usage, cost: Number(cost.total.toPrecision(12)), cost_details: roundedComponents(cost) };
}

function roundedComponents(cost: Cost): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [name, value] of Object.entries(cost.components ?? {})) out[name] = Number(value.toPrecision(12));
  return out;
}

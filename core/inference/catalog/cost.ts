import type { ChatUsage } from "../../providers/types.ts";
import { type CatalogModel, findCatalogModel } from "./catalog.ts";
import { type PriceOverride, tokenPricesWith } from "./price-override.ts";

export interface Cost {
  /** USD. */
  total: number;
  input: number;
  output: number;
  /** False when the catalog has no price for this model (total is then 0). */
  priced: boolean;
}

/**
 * Cost of one request from normalised usage and the catalog's per-million-token prices: uncached prompt
 * tokens at the input price, cache reads and writes at their own prices (falling back to input), completion
 * tokens at the output price (reasoning tokens at the reasoning price when the catalog has one).
 */
export function costOf(provider: string, model: string, usage: ChatUsage, override?: PriceOverride): Cost {
  return costFromPrices(tokenPricesWith(findCatalogModel(provider, model)?.prices, override), usage);
}

/** Cost of usage at these per-million-token prices (the catalog's, or with an override applied). */
export function costFromPrices(prices: CatalogModel["prices"], usage: ChatUsage): Cost {
  if (!prices || (prices.input === undefined && prices.output === undefined)) {
    return { total: 0, input: 0, output: 0, priced: false };
  }
  const perToken = (perMillion: number | undefined) => (perMillion ?? 0) / 1_000_000;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const cacheWrite = usage.prompt_tokens_details?.cache_creation_tokens ?? 0;
  const uncached = Math.max(0, usage.prompt_tokens - cached - cacheWrite);
  const reasoning = prices.reasoning !== undefined ? (usage.completion_tokens_details?.reasoning_tokens ?? 0) : 0;
  const input =
    uncached * perToken(prices.input) +
    cached * perToken(prices.cacheRead ?? prices.input) +
    cacheWrite * perToken(prices.cacheWrite ?? prices.input);
  const output =
    (usage.completion_tokens - reasoning) * perToken(prices.output) + reasoning * perToken(prices.reasoning);
  return { total: input + output, input, output, priced: true };
}

import type { Cost } from "../catalog/cost.ts";
import { priceUsage } from "../catalog/load.ts";
import { REALTIME_PRICES, type RealtimeTokenPrice } from "../catalog/unit-prices/realtime.ts";
import { chatUsageOf, type RealtimeUsage } from "./usage.ts";

export function realtimePriceOf(provider: string, model: string): RealtimeTokenPrice | undefined {
  return REALTIME_PRICES.find((row) => row.providers.includes(provider) && row.model.test(model));
}

/**
 * What a session cost: text and audio tokens each at their own price (core/inference/catalog/unit-prices/realtime.ts),
 * cached input at the cached price. A model that table does not know is priced by the catalog's token prices
 * (audio tokens then at the text price), else unpriced.
 */
export async function realtimeCost(provider: string, model: string, usage: RealtimeUsage): Promise<Cost> {
  const price = realtimePriceOf(provider, model);
  if (!price) return priceUsage(provider, model, chatUsageOf(usage));
  const perToken = (perMillion: number) => perMillion / 1_000_000;
  const { input, output } = usage;
  const inputCost =
    Math.max(0, input.text - input.cachedText) * perToken(price.text.input) +
    input.cachedText * perToken(price.text.cachedInput) +
    Math.max(0, input.audio - input.cachedAudio) * perToken(price.audio.input) +
    input.cachedAudio * perToken(price.audio.cachedInput);
  const outputCost = output.text * perToken(price.text.output) + output.audio * perToken(price.audio.output);
  return { total: inputCost + outputCost, input: inputCost, output: outputCost, priced: true };
}

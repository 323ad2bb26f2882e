import { type CatalogModel, listCatalogModels } from "./catalog.ts";
import { type GenaiModel, listGenaiModels } from "./genai-price.ts";
import { GENAI_PRICES, MODELS_DEV } from "./price-source.ts";
import type { PriceSource } from "./token-price.ts";

/**
 * The integrated model list of GET /v1/models: models.dev's models (context windows, capabilities) and
 * genai-prices' (the current models models.dev's snapshot stops short of), one entry per provider and model, each
 * priced from genai-prices where it lists the model, else from models.dev, and naming that source and its date.
 */

export interface ListedModel {
  id: string;
  provider: string;
  name?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  capabilities?: CatalogModel["capabilities"];
  releaseDate?: string;
  pricing?: ListedPricing;
}

/** USD per 1M tokens of bracket 0, and the long-context tiers above it. */
export interface ListedPricing {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  cacheWrite1h?: number;
  reasoning?: number;
  tiers?: Array<{ aboveInputTokens: number; input?: number; output?: number; cacheRead?: number }>;
  source: PriceSource;
}

type PriceValue = number | { base: number; tiers: Array<{ start: number; price: number }> } | undefined;

const base = (value: PriceValue) => (value === undefined ? undefined : typeof value === "number" ? value : value.base);

function genaiPricing(model: GenaiModel): ListedPricing | undefined {
  const prices = model.prices as Record<string, PriceValue>;
  if (prices.input_mtok === undefined && prices.output_mtok === undefined) return undefined;
  const starts = new Set<number>();
  for (const value of Object.values(prices))
    if (value && typeof value === "object") for (const tier of value.tiers) starts.add(tier.start);
  const at = (value: PriceValue, start: number) => {
    if (value === undefined || typeof value === "number") return value;
    let price = value.base;
    for (const tier of value.tiers) if (start >= tier.start) price = tier.price;
    return price;
  };
  return {
    input: base(prices.input_mtok),
    output: base(prices.output_mtok),
    cacheRead: base(prices.cache_read_mtok),
    cacheWrite: base(prices.cache_write_mtok),
    cacheWrite1h: base(prices.cache_write_1h_mtok),
    reasoning: base(prices.output_reasoning_mtok),
    ...(starts.size > 0
      ? {
          tiers: [...starts]
            .sort((a, b) => a - b)
            .map((start) => ({
              aboveInputTokens: start,
              input: at(prices.input_mtok, start),
              output: at(prices.output_mtok, start),
              cacheRead: at(prices.cache_read_mtok, start),
            })),
        }
      : {}),
    source: GENAI_PRICES,
  };
}

let listing: ListedModel[] | undefined;

/** Built once per process (both sources are fixed for its life). */
export function listModels(): ListedModel[] {
  if (listing) return listing;
  const byKey = new Map<string, ListedModel>();
  for (const model of listCatalogModels()) {
    byKey.set(`${model.provider}\u0000${model.id}`, {
      id: model.id,
      provider: model.provider,
      name: model.name,
      contextWindow: model.contextWindow,
      maxOutputTokens: model.maxOutputTokens,
      capabilities: model.capabilities,
      releaseDate: model.releaseDate,
      pricing: model.prices && { ...model.prices, source: MODELS_DEV },
    });
  }
  for (const model of listGenaiModels()) {
    const key = `${model.provider}\u0000${model.id}`;
    const known = byKey.get(key);
    const pricing = genaiPricing(model) ?? known?.pricing;
    byKey.set(key, {
      ...(known ?? { id: model.id, provider: model.provider, name: model.name }),
      contextWindow: known?.contextWindow ?? model.contextWindow,
      pricing,
    });
  }
  listing = [...byKey.values()];
  return listing;
}

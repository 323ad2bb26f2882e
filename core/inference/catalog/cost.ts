import type { ChatUsage } from "../../providers/types.ts";
import { findCatalogModel } from "./catalog.ts";
import { genaiTokenPrice } from "./genai-price.ts";
import type { PriceOverride } from "./price-override.ts";
import { GENAI_PRICES, MODELS_DEV, OVERRIDE } from "./price-source.ts";
import { serviceTierFactor } from "./service-tier.ts";
import { flatTokenPrice, type PriceSource, priceTokens, type TokenPrice, tokenUsageOf } from "./token-price.ts";

export interface Cost {
  /** USD. */
  total: number;
  input: number;
  output: number;
  /** False when no source has a price for this model (total is then 0, and `reason` says why). */
  priced: boolean;
  /** USD per component (`input`, `cache_read`, `cache_write`, `cache_write_1h`, `output`, `output_reasoning`...). */
  components?: Record<string, number>;
  /** Where the prices came from (name, version, date; `override` when an admin's saved price took part). */
  source?: PriceSource & { model?: string; override?: boolean };
  /** Why the request has no price. */
  reason?: string;
  /** A provider batch's discount or a service tier's factor, applied to every component. */
  factor?: { value: number; why: string };
  /** Something the price could not take into account (a tier without a known rate). */
  note?: string;
}

/** What changes a price besides the model and its usage. */
export interface PricingOptions {
  /** When the request was made (prices with a start date or a time of day); default now. */
  at?: Date;
  /** The service tier the answer reports (`flex`, `priority`, `default`...). */
  serviceTier?: string;
  /** The price factor of the provider's batch API, for a line of a native batch (batch-discount.ts). */
  batchFactor?: number;
}

/**
 * The token prices of a provider's model: genai-prices (the maintained, dated source), else models.dev's, with
 * an admin's override on top (it wins field by field, and alone prices a model neither source knows).
 */
export function tokenPriceOf(
  provider: string,
  model: string,
  override?: PriceOverride,
  at = new Date(),
): TokenPrice | undefined {
  const base = genaiTokenPrice(provider, model, at) ?? modelsDevPrice(provider, model);
  return override ? withOverride(base, override) : base;
}

/** Cost of one request from its normalised usage; an unknown price says so (`priced: false`) instead of $0. */
export function costOf(
  provider: string,
  model: string,
  usage: ChatUsage,
  override?: PriceOverride,
  options: PricingOptions = {},
): Cost {
  const price = tokenPriceOf(provider, model, override, options.at);
  if (!price) return unpricedCost(provider, model);
  return costAt(price, usage, provider, options);
}

export function costAt(price: TokenPrice, usage: ChatUsage, provider: string, options: PricingOptions = {}): Cost {
  const priced = priceTokens(price, tokenUsageOf(usage));
  const cost: Cost = {
    ...priced,
    priced: true,
    source: { ...price.source, ...(price.sourceModel ? { model: price.sourceModel } : {}) },
  };
  const tier = options.serviceTier ? serviceTierFactor(provider, options.serviceTier) : undefined;
  if (tier?.note) cost.note = tier.note;
  if (options.batchFactor !== undefined && options.batchFactor !== 1)
    return scaled(cost, { value: options.batchFactor, why: "batch" });
  if (tier && tier.factor !== 1)
    return scaled(cost, { value: tier.factor, why: `service_tier ${options.serviceTier}` });
  return cost;
}

export function unpricedCost(provider: string, model: string): Cost {
  return {
    total: 0,
    input: 0,
    output: 0,
    priced: false,
    reason: `No price for ${provider} model '${model}' in ${GENAI_PRICES.name} ${GENAI_PRICES.version} or ${MODELS_DEV.name}, and no model-pricing override.`,
  };
}

function scaled(cost: Cost, factor: { value: number; why: string }): Cost {
  const components: Record<string, number> = {};
  for (const [name, usd] of Object.entries(cost.components ?? {})) components[name] = usd * factor.value;
  return {
    ...cost,
    total: cost.total * factor.value,
    input: cost.input * factor.value,
    output: cost.output * factor.value,
    components,
    factor,
  };
}

function modelsDevPrice(provider: string, model: string): TokenPrice | undefined {
  const found = findCatalogModel(provider, model);
  const prices = found?.prices;
  if (!prices || (prices.input === undefined && prices.output === undefined)) return undefined;
  const price = flatTokenPrice(MODELS_DEV, {
    input_tokens: prices.input,
    output_tokens: prices.output,
    cache_read_tokens: prices.cacheRead,
    cache_write_tokens: prices.cacheWrite,
    output_reasoning_tokens: prices.reasoning,
  });
  return { ...price, sourceModel: found.provider === provider ? found.id : `${found.provider}/${found.id}` };
}

/** The override's token prices set the rate of their key in every bracket (an override is one flat price). */
function withOverride(base: TokenPrice | undefined, override: PriceOverride): TokenPrice | undefined {
  const perMillion = {
    input_tokens: override.input,
    output_tokens: override.output,
    cache_read_tokens: override.cacheRead,
    cache_write_tokens: override.cacheWrite,
    output_reasoning_tokens: override.reasoning,
  };
  const set = Object.entries(perMillion).filter(([, value]) => value !== undefined);
  if (set.length === 0) return base;
  if (!base) {
    if (override.input === undefined && override.output === undefined) return undefined;
    return flatTokenPrice(OVERRIDE, perMillion);
  }
  return {
    ...base,
    source: { ...base.source, override: true } as PriceSource,
    brackets: base.brackets.map((rates) => {
      const next = { ...rates };
      for (const [key, value] of set) next[key as keyof typeof next] = (value as number) / 1_000_000;
      return next;
    }),
  };
}

import type { MeteredUsage } from "../../providers/types.ts";
import type { Cost } from "./cost.ts";
import { type PriceOverride, unitPriceWith } from "./price-override.ts";
import { UNIT_PRICES } from "./unit-prices/index.ts";
import type { UnitPrice } from "./unit-prices/types.ts";

/**
 * Cost of what a request used by the unit (images, seconds of audio, characters, searches, pages) from the unit
 * price table; undefined when the table has no row for the provider's model (the caller then prices tokens from
 * the catalog, as gpt-image and gpt-4o-transcribe are priced).
 */
export function unitPriceOf(provider: string, model: string): UnitPrice | undefined {
  return UNIT_PRICES.find(
    (row) =>
      row.providers.includes(provider) && (typeof row.model === "string" ? row.model === model : row.model.test(model)),
  );
}

/** Whether the unit price table (with an override's unit prices on top) prices a provider's model. */
export function hasUnitPrice(provider: string, model: string, override?: PriceOverride): boolean {
  return unitPriceWith(unitPriceOf(provider, model), override, provider, model) !== undefined;
}

/** Prices per unit are facts from each provider's pricing page (unit-prices/*.ts): no maintained package has them. */
const UNIT_SOURCE = { name: "unit price table (providers' pricing pages)" };

export function unitCostOf(
  provider: string,
  model: string,
  metered: MeteredUsage,
  override?: PriceOverride,
): Cost | undefined {
  const price = unitPriceWith(unitPriceOf(provider, model), override, provider, model);
  if (!price) return undefined;
  let tokens = 0;
  let tokenOutput = 0;
  if (price.perMillionTokens) {
    // A token-priced row with no usage reported has nothing to price: unpriced, not free.
    if (!metered.usage) return undefined;
    const { input, output = 0 } = price.perMillionTokens;
    tokenOutput = (metered.usage.completion_tokens * output) / 1_000_000;
    tokens = (metered.usage.prompt_tokens * input) / 1_000_000 + tokenOutput;
  }
  const byUnit = unitsTotal(price, metered.units ?? {}, metered);
  const total = tokens + byUnit;
  const components: Record<string, number> = {};
  if (price.perMillionTokens) components.tokens = tokens;
  if (byUnit > 0) components.units = byUnit;
  // Units go in; images and audio come out, but the split matters only for tokens: the rest is input here.
  return { total, input: total - tokenOutput, output: tokenOutput, priced: true, components, source: UNIT_SOURCE };
}

function unitsTotal(price: UnitPrice, units: NonNullable<MeteredUsage["units"]>, metered: MeteredUsage): number {
  let total = 0;
  if (units.images && price.perImage !== undefined) total += units.images * imagePrice(price.perImage, metered);
  if (units.seconds && price.perSecond !== undefined) total += units.seconds * price.perSecond;
  if (units.characters && price.perCharacter !== undefined) total += units.characters * price.perCharacter;
  if (units.searches && price.perSearch !== undefined) total += units.searches * price.perSearch;
  if (units.pages && price.perPage !== undefined) total += units.pages * price.perPage;
  return total;
}

function imagePrice(perImage: NonNullable<UnitPrice["perImage"]>, metered: MeteredUsage): number {
  if (typeof perImage === "number") return perImage;
  const { size, quality } = metered.priceKey ?? {};
  const keys = [quality && size && `${quality}:${size}`, size, quality, "default"];
  for (const key of keys) if (key && perImage[key] !== undefined) return perImage[key]!;
  return 0;
}

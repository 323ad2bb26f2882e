import type { CatalogModel } from "./catalog.ts";
import type { UnitPrice } from "./unit-prices/types.ts";

/**
 * A saved price override (core/control/model-pricing/store.ts) as cost tracking reads it: the prices one organisation,
 * workspace or integration set for a provider's model. Every field is optional; an unset one falls back to
 * the next less specific override, then to the catalog.
 */
export interface PriceOverride {
  /** USD per million tokens. */
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  reasoning?: number;
  /** Fine-tuning: USD per million trained tokens. */
  training?: number;
  /** USD per unit, as in core/inference/catalog/unit-prices/types.ts. */
  perImage?: number | Readonly<Record<string, number>>;
  perSecond?: number;
  perCharacter?: number;
  perSearch?: number;
  perPage?: number;
}

/** The override (if any) that applies to a provider's model for this request. */
export type PriceOverrides = (provider: string, model: string) => Promise<PriceOverride | undefined>;

export const TOKEN_FIELDS = ["input", "output", "cacheRead", "cacheWrite", "reasoning"] as const;
export const UNIT_FIELDS = ["perImage", "perSecond", "perCharacter", "perSearch", "perPage"] as const;

/** Field by field, later overrides win (pass them least specific first). */
export function mergeOverrides(overrides: readonly PriceOverride[]): PriceOverride | undefined {
  if (overrides.length === 0) return undefined;
  const merged: Record<string, unknown> = {};
  for (const override of overrides)
    for (const [field, value] of Object.entries(override)) if (value !== undefined) merged[field] = value;
  return merged as PriceOverride;
}

/** The catalog's token prices with the override's on top. */
export function tokenPricesWith(
  catalog: CatalogModel["prices"],
  override: PriceOverride | undefined,
): CatalogModel["prices"] {
  if (!override) return catalog;
  const prices = { ...catalog };
  for (const field of TOKEN_FIELDS) if (override[field] !== undefined) prices[field] = override[field];
  return prices;
}

/**
 * The unit price row with the override's unit prices on top (a row of its own when the table has none). The
 * override's token prices also replace a token-priced row's (gpt-image). Undefined when neither prices units.
 */
export function unitPriceWith(
  row: UnitPrice | undefined,
  override: PriceOverride | undefined,
  provider: string,
  model: string,
): UnitPrice | undefined {
  const ownsUnits = override && UNIT_FIELDS.some((field) => override[field] !== undefined);
  if (!ownsUnits) {
    if (!row?.perMillionTokens || override?.input === undefined) return row;
  }
  const price: UnitPrice = { ...(row ?? { providers: [provider], model }) } as UnitPrice;
  const writable = price as { -readonly [K in keyof UnitPrice]: UnitPrice[K] };
  for (const field of UNIT_FIELDS)
    if (override?.[field] !== undefined) Object.assign(writable, { [field]: override[field] });
  if (row?.perMillionTokens && override?.input !== undefined)
    writable.perMillionTokens = { input: override.input, output: override.output ?? row.perMillionTokens.output };
  return price;
}

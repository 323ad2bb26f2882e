import type { ChatUsage, MeteredUsage } from "../../providers/types.ts";
import type { CatalogModel } from "./catalog.ts";
import type { Cost } from "./cost.ts";
import type { PriceOverride } from "./price-override.ts";
import type { UnitPrice } from "./unit-prices/types.ts";

/**
 * The model catalog for the request path, loaded on first use. The catalog (models.dev data, ~230 KB) is the
 * largest module the data-plane functions import: reached only through these functions, it sits in its own
 * chunk (code splitting) and is parsed by the first request that prices usage or lists models, not by every
 * cold start. catalog.ts and cost.ts keep their synchronous API for code that has the catalog loaded already.
 */

let costModule: Promise<typeof import("./cost.ts")> | undefined;
let catalogModule: Promise<typeof import("./catalog.ts")> | undefined;

/** `override`: the prices saved for this model (core/control/model-pricing/store.ts), over the catalog's. */
export async function priceUsage(
  provider: string,
  model: string,
  usage: ChatUsage,
  override?: PriceOverride,
): Promise<Cost> {
  costModule ??= import("./cost.ts");
  return (await costModule).costOf(provider, model, usage, override);
}

let unitCostModule: Promise<typeof import("./unit-cost.ts")> | undefined;

/**
 * Cost of a family billed by the unit or by the token (images, audio, rerank, OCR, moderations): the unit price
 * table when it has the model, else the catalog's token prices on the reported usage, else unpriced.
 */
export async function priceMetered(
  provider: string,
  model: string,
  metered: MeteredUsage,
  override?: PriceOverride,
): Promise<Cost> {
  unitCostModule ??= import("./unit-cost.ts");
  const byUnit = (await unitCostModule).unitCostOf(provider, model, metered, override);
  if (byUnit) return byUnit;
  if (metered.usage) return priceUsage(provider, model, metered.usage, override);
  return { total: 0, input: 0, output: 0, priced: false };
}

/** The catalog's entry for a provider's model (findCatalogModel), or undefined. */
export async function catalogModel(provider: string, model: string): Promise<CatalogModel | undefined> {
  catalogModule ??= import("./catalog.ts");
  return (await catalogModule).findCatalogModel(provider, model);
}

export async function catalogModels(): Promise<CatalogModel[]> {
  catalogModule ??= import("./catalog.ts");
  return (await catalogModule).listCatalogModels();
}

/** The unit price table's row for a provider's model (unitPriceOf), or undefined. */
export async function catalogUnitPrice(provider: string, model: string): Promise<UnitPrice | undefined> {
  unitCostModule ??= import("./unit-cost.ts");
  return (await unitCostModule).unitPriceOf(provider, model);
}

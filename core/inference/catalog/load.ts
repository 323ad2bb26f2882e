import type { ChatUsage, MeteredUsage } from "../../providers/types.ts";
import type { CatalogModel } from "./catalog.ts";
import type { Cost, PricingOptions } from "./cost.ts";
import type { PriceOverride } from "./price-override.ts";
import type { TokenPrice } from "./token-price.ts";
import type { UnitPrice } from "./unit-prices/types.ts";

/**
 * The price sources and the model catalog for the request path, loaded on first use. genai-prices (~830 KB) and
 * the models.dev catalog (~230 KB) are the largest modules the data-plane functions import: reached only through
 * these functions, they sit in their own chunk (code splitting) and are parsed by the first request that prices
 * usage or lists models, never on a Lambda family's init path (`npm run bench -- --only=bundles` measures it).
 * cost.ts and catalog.ts keep their synchronous API for code that has them loaded already.
 */

let costModule: Promise<typeof import("./cost.ts")> | undefined;
let catalogModule: Promise<typeof import("./catalog.ts")> | undefined;

const loadCost = () => {
  costModule ??= import("./cost.ts");
  return costModule;
};

/** `override`: the prices saved for this model (core/control/model-pricing/store.ts), over the sources'. */
export async function priceUsage(
  provider: string,
  model: string,
  usage: ChatUsage,
  override?: PriceOverride,
  options?: PricingOptions,
): Promise<Cost> {
  return (await loadCost()).costOf(provider, model, usage, override, options);
}

/** The token prices of a provider's model (with an override on top), or undefined when none is known. */
export async function tokenPrice(
  provider: string,
  model: string,
  override?: PriceOverride,
): Promise<TokenPrice | undefined> {
  return (await loadCost()).tokenPriceOf(provider, model, override);
}

/** Prices usage synchronously, with the price resolved beforehand (a stream's usage chunk is priced as it passes). */
export type Pricer = (usage: ChatUsage, options?: PricingOptions) => Cost;

/** Resolves a provider's model's price once (per request; the sources cache it per process) for a Pricer. */
export async function pricerFor(provider: string, model: string, override?: PriceOverride): Promise<Pricer> {
  const cost = await loadCost();
  const price = cost.tokenPriceOf(provider, model, override);
  if (!price) {
    const unpriced = cost.unpricedCost(provider, model);
    return () => unpriced;
  }
  return (usage, options) => cost.costAt(price, usage, provider, options);
}

let unitCostModule: Promise<typeof import("./unit-cost.ts")> | undefined;

/**
 * Cost of a family billed by the unit or by the token (images, audio, rerank, OCR, moderations): the unit price
 * table when it has the model, else the token prices on the reported usage, else unpriced.
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
  return (await loadCost()).unpricedCost(provider, model);
}

/** Whether a provider's model has a price: a token price, a unit price, or an override. */
export async function hasPrice(provider: string, model: string, override?: PriceOverride): Promise<boolean> {
  if (await tokenPrice(provider, model, override)) return true;
  unitCostModule ??= import("./unit-cost.ts");
  return (await unitCostModule).hasUnitPrice(provider, model, override);
}

/** The catalog's entry for a provider's model (findCatalogModel), or undefined. */
export async function catalogModel(provider: string, model: string): Promise<CatalogModel | undefined> {
  catalogModule ??= import("./catalog.ts");
  return (await catalogModule).findCatalogModel(provider, model);
}

/** GET /v1/models' list: both sources' models, each priced by the first that has it, with that source named. */
export async function listedModels(): Promise<import("./listing.ts").ListedModel[]> {
  return (await import("./listing.ts")).listModels();
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

import type { Principal } from "../../auth/principal.ts";
import { type PriceOverride, type PriceOverrides, mergeOverrides } from "../../inference/catalog/price-override.ts";
import type { Records } from "../../store/ports.ts";
import { TtlCache } from "../../util/ttl-cache.ts";
import { type Resource, ResourceStore } from "../resource-store.ts";

/**
 * Saved model prices (`/v1/model-pricing`): an override of the catalog's prices for one provider's model, or the
 * prices of a custom model the catalog does not know, set for the whole organisation, one workspace or one
 * integration. Cost tracking reads them through `priceOverridesFor`: the most specific wins field by field
 * (integration > workspace > organisation > catalog).
 *
 * The request path must not read the store per request: each organisation's overrides are held in this
 * process for a few seconds as one index, dropped at once when this process changes one
 * (`modelPricingChanged`); other processes see a change within CACHE_MS.
 */

export type PricingLevel = "organisation" | "workspace" | "integration";

export interface ModelPriceResource extends Resource {
  provider: string;
  model: string;
  level: PricingLevel;
  /** Integration-level: the integration; its workspace (if any) is the record's workspaceId. */
  integrationId?: string;
  prices: PriceOverride;
  note?: string;
  createdBy?: string;
}

export const modelPriceStore = (records: Records) =>
  new ResourceStore<ModelPriceResource>(records, "MODELPRICE", "mpr");

/** One override per provider, model and place: the slug is that key, so a second one answers 409. */
export function pricingSlug(level: PricingLevel, placeId: string, provider: string, model: string): string {
  return `${level}:${placeId}:${provider}:${model}`;
}

const CACHE_MS = 5_000;
/** An organisation's overrides beyond this many are not read into the request path's index. */
const MAX_INDEXED = 5_000;

type Index = Map<string, ModelPriceResource[]>;

const indexes = new WeakMap<Records, TtlCache<string, Promise<Index>>>();

function cacheOf(records: Records) {
  let cache = indexes.get(records);
  if (!cache) {
    cache = new TtlCache<string, Promise<Index>>({ ttlMs: CACHE_MS, maxEntries: 10_000 });
    indexes.set(records, cache);
  }
  return cache;
}

const indexKey = (provider: string, model: string) => `${provider}\u0000${model}`;

async function readIndex(records: Records, organisationId: string): Promise<Index> {
  const index: Index = new Map();
  const store = modelPriceStore(records);
  let cursor: string | undefined;
  let read = 0;
  do {
    const page = await store.list(organisationId, { limit: 1000, cursor });
    for (const price of page.items) {
      const key = indexKey(price.provider, price.model);
      const list = index.get(key);
      if (list) list.push(price);
      else index.set(key, [price]);
    }
    read += page.items.length;
    cursor = page.cursor;
  } while (cursor && read < MAX_INDEXED);
  return index;
}

/** The organisation's overrides, from this process's copy while fresh. */
function indexOf(records: Records, organisationId: string): Promise<Index> {
  const cache = cacheOf(records);
  let index = cache.get(organisationId);
  if (!index) {
    index = readIndex(records, organisationId);
    // A failed read is not remembered: the next request tries again.
    index.catch(() => cache.delete(organisationId));
    cache.set(organisationId, index);
  }
  return index;
}

/** Called after every create, update and delete of a saved price. */
export function modelPricingChanged(records: Records, organisationId: string): void {
  cacheOf(records).delete(organisationId);
}

/** The overrides that apply to one caller's request to a target (saved integration or not). */
export function priceOverridesFor(
  records: Records,
  principal: Pick<Principal, "organisationId" | "workspaceId">,
  integrationId: string | undefined,
): PriceOverrides {
  return async (provider, model) => {
    const matches = (await indexOf(records, principal.organisationId)).get(indexKey(provider, model));
    if (!matches) return undefined;
    return mergeOverrides(applicableOverrides(matches, principal.workspaceId, integrationId));
  };
}

const RANK: Record<PricingLevel, number> = { organisation: 0, workspace: 1, integration: 2 };

/** Least specific first: the organisation's, the caller's workspace's, the integration's. */
export function applicableOverrides(
  prices: readonly ModelPriceResource[],
  workspaceId: string | undefined,
  integrationId: string | undefined,
): PriceOverride[] {
  return prices
    .filter(
      (price) =>
        price.level === "organisation" ||
        (price.level === "workspace" && workspaceId !== undefined && price.workspaceId === workspaceId) ||
        (price.level === "integration" && integrationId !== undefined && price.integrationId === integrationId),
    )
    .sort((a, b) => RANK[a.level] - RANK[b.level])
    .map((price) => price.prices);
}

import type { Principal } from "../../auth/principal.ts";
import { isOrganisationWide, workspaceScope } from "../../auth/scopes.ts";
import { catalogModel, catalogUnitPrice } from "../../inference/catalog/load.ts";
import type { PriceOverride } from "../../inference/catalog/price-override.ts";
import { providerIdOf } from "../../providers/registry.ts";
import type { Page } from "../../store/ports.ts";
import { type ControlDeps, changed } from "../deps.ts";
import { Forbidden, Invalid, NotFound } from "../errors.ts";
import { findIntegration } from "../integrations/store.ts";
import { type Lazy, resolveLazy } from "../lazy.ts";
import {
  type ModelPriceResource,
  type PricingLevel,
  modelPriceStore,
  modelPricingChanged,
  pricingSlug,
} from "./store.ts";
import type { ModelPricingCreateInput, ModelPricingUpdateInput, PricesInput } from "./schemas.ts";
import { type PageRequest, readPage } from "../paging.ts";
import { assertWritable, boundWorkspace, isoTime } from "../credentials/credentials.ts";
import { canUseProvider } from "../saved-resources.ts";

/**
 * Model pricing overrides and custom models (core/control/model-pricing/store.ts). Where one belongs: `integration_id`
 * (an integration the caller may change) makes an integration's; else `workspace_id`, or a workspace key's own
 * workspace, a workspace's; else (organisation-wide callers only) the organisation's. Workspace-bound callers
 * see their workspace's and the organisation's (which apply to them) and change only their workspace's.
 */

const fromInput = (prices: PricesInput): PriceOverride => ({
  input: prices.input,
  output: prices.output,
  cacheRead: prices.cache_read,
  cacheWrite: prices.cache_write,
  reasoning: prices.reasoning,
  perImage: prices.per_image,
  perSecond: prices.per_second,
  perCharacter: prices.per_character,
  perSearch: prices.per_search,
  perPage: prices.per_page,
});

/** The API's names; unset prices are left out. */
function presentPrices(prices: PriceOverride) {
  const shown = {
    input: prices.input,
    output: prices.output,
    cache_read: prices.cacheRead,
    cache_write: prices.cacheWrite,
    reasoning: prices.reasoning,
    per_image: prices.perImage,
    per_second: prices.perSecond,
    per_character: prices.perCharacter,
    per_search: prices.perSearch,
    per_page: prices.perPage,
  };
  return Object.fromEntries(Object.entries(shown).filter(([, value]) => value !== undefined));
}

/** The catalog's prices for the model in the same names, or null when the catalog prices it not (a custom model). */
async function catalogPrices(provider: string, model: string) {
  const tokens = (await catalogModel(provider, model))?.prices;
  const units = await catalogUnitPrice(provider, model);
  if (!tokens && !units) return null;
  const prices = presentPrices({
    ...tokens,
    ...(units?.perMillionTokens ? { input: units.perMillionTokens.input, output: units.perMillionTokens.output } : {}),
    perImage: units?.perImage,
    perSecond: units?.perSecond,
    perCharacter: units?.perCharacter,
    perSearch: units?.perSearch,
    perPage: units?.perPage,
  });
  return Object.keys(prices).length > 0 ? prices : null;
}

function present(price: ModelPriceResource) {
  return {
    id: price.id,
    object: "model_pricing",
    provider: price.provider,
    model: price.model,
    level: price.level,
    organisation_id: price.organisationId,
    workspace_id: price.workspaceId ?? null,
    integration_id: price.integrationId ?? null,
    prices: presentPrices(price.prices),
    note: price.note ?? null,
    created_at: isoTime(price.createdAt),
    last_updated_at: isoTime(price.updatedAt),
  };
}

/** As `present`, with the catalog's price beside the override. */
async function presentWithCatalog(price: ModelPriceResource) {
  const catalog = await catalogPrices(price.provider, price.model);
  return { ...present(price), catalog_prices: catalog, is_custom: catalog === null };
}

export type ModelPricingView = Awaited<ReturnType<typeof presentWithCatalog>>;

const visibleTo = (principal: Principal, price: ModelPriceResource) => {
  const bound = boundWorkspace(principal);
  return !bound || price.workspaceId === undefined || price.workspaceId === bound;
};

async function loadVisible(deps: ControlDeps, principal: Principal, id: string) {
  const price = await modelPriceStore(deps.records).get(principal.organisationId, id);
  // Only ids: slugs are internal keys.
  if (!price || price.id !== id || !visibleTo(principal, price))
    throw new NotFound(`No model pricing '${id}'.`, { code: "model_pricing_not_found" });
  return price;
}

/** Where a new price belongs, checked against what the caller may change. */
async function placeOf(deps: ControlDeps, principal: Principal, input: ModelPricingCreateInput) {
  if (input.integration_id) {
    const integration = await findIntegration(deps.records, principal.organisationId, input.integration_id);
    if (!integration || !canUseProvider(principal, integration))
      throw new NotFound(`No integration '${input.integration_id}'.`, {
        code: "integration_not_found",
        param: "integration_id",
      });
    assertWritable(principal, integration, "integrations' prices");
    if (input.workspace_id && input.workspace_id !== integration.workspaceId)
      throw new Invalid("`workspace_id` must be the integration's workspace.", { param: "workspace_id" });
    return {
      level: "integration" as PricingLevel,
      placeId: integration.id,
      workspaceId: integration.workspaceId,
      integrationId: integration.id,
    };
  }
  const workspaceId = workspaceScope(principal, input.workspace_id);
  if (workspaceId) return { level: "workspace" as PricingLevel, placeId: workspaceId, workspaceId };
  if (!isOrganisationWide(principal))
    throw new Forbidden("Organisation prices need an organisation-level key.", { code: "admin_required" });
  return { level: "organisation" as PricingLevel, placeId: principal.organisationId };
}

export async function createModelPricing(
  deps: ControlDeps,
  principal: Principal,
  input: ModelPricingCreateInput,
): Promise<ModelPricingView> {
  const provider = providerIdOf(input.provider);
  if (!provider)
    throw new Invalid(`Unknown provider '${input.provider}'.`, { param: "provider", code: "unknown_provider" });
  const place = await placeOf(deps, principal, input);
  const created = await modelPriceStore(deps.records).create(principal.organisationId, {
    slug: pricingSlug(place.level, place.placeId, provider, input.model),
    provider,
    model: input.model,
    level: place.level,
    workspaceId: place.workspaceId,
    ...(place.integrationId ? { integrationId: place.integrationId } : {}),
    prices: fromInput(input.prices),
    ...(input.note !== undefined ? { note: input.note } : {}),
    createdBy: principal.userId ?? principal.keyId,
  });
  modelPricingChanged(deps.records, created.organisationId);
  await changed(deps, principal, { action: "create", resourceType: "model_pricing", after: created }, present);
  return presentWithCatalog(created);
}

export async function listModelPricing(
  deps: ControlDeps,
  principal: Principal,
  input: PageRequest & { workspace_id?: string; provider?: string; model?: string; integration_id?: string },
): Promise<Page<ModelPricingView>> {
  const workspaceId = workspaceScope(principal, input.workspace_id);
  const page = await readPage(() =>
    modelPriceStore(deps.records).list(principal.organisationId, {
      limit: input.limit,
      cursor: input.cursor,
      filter: (price) =>
        visibleTo(principal, price) &&
        (!workspaceId || price.workspaceId === undefined || price.workspaceId === workspaceId) &&
        (!input.provider || price.provider === input.provider) &&
        (!input.model || price.model === input.model) &&
        (!input.integration_id || price.integrationId === input.integration_id),
    }),
  );
  return { items: await Promise.all(page.items.map(presentWithCatalog)), cursor: page.cursor };
}

export async function getModelPricing(deps: ControlDeps, principal: Principal, input: { id: string }) {
  return presentWithCatalog(await loadVisible(deps, principal, input.id));
}

/** `prices` replaces the stored prices as a whole (a price left out falls back to the catalog again). */
export async function updateModelPricing(
  deps: ControlDeps,
  principal: Principal,
  input: { id: string; changes: Lazy<ModelPricingUpdateInput> },
) {
  const current = await loadVisible(deps, principal, input.id);
  assertWritable(principal, current, "prices");
  const body = await resolveLazy(input.changes);
  const changes: Partial<ModelPriceResource> = {};
  if (body.prices) changes.prices = fromInput(body.prices);
  if (body.note !== undefined) changes.note = body.note ?? undefined;
  const updated = await modelPriceStore(deps.records).update(current, changes);
  modelPricingChanged(deps.records, updated.organisationId);
  await changed(
    deps,
    principal,
    { action: "update", resourceType: "model_pricing", before: current, after: updated },
    present,
  );
  return presentWithCatalog(updated);
}

export async function deleteModelPricing(deps: ControlDeps, principal: Principal, input: { id: string }) {
  const current = await loadVisible(deps, principal, input.id);
  assertWritable(principal, current, "prices");
  await modelPriceStore(deps.records).delete(current);
  modelPricingChanged(deps.records, current.organisationId);
  await changed(deps, principal, { action: "delete", resourceType: "model_pricing", before: current }, present);
  return { id: current.id, object: "model_pricing", deleted: true };
}

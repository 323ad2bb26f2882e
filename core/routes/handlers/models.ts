import { listedModels } from "../../inference/catalog/load.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { HttpError } from "../../http/errors.ts";
import { json } from "../../http/json.ts";
import type { ListedPricing } from "../../inference/catalog/listing.ts";
import { resolveRouting } from "../../inference/routing/source.ts";
import { routeInference } from "../../inference/gateway/inference.ts";
import { newOutcome } from "../../inference/gateway/outcome.ts";
import { gatewayHeadersOf } from "../../inference/gateway/plan.ts";
import { geminiModelCall } from "../../inference/gateway/gemini-call.ts";

const catalogCreated = Math.floor(Date.parse("2024-01-01T00:00:00Z") / 1000);

/**
 * GET /v1/models (spec 4.6): the integrated catalog, unless the request names a provider or config, in which
 * case the provider's own list is proxied (through the routing engine, so configs apply).
 * `x-gateway-fetch-integrated-models: true`, `x-gateway-models-endpoint` or the config's root field
 * `fetch_integrated_models: true` ask for the catalog even then.
 * `?provider=` filters the catalog.
 */
async function listModels(request: Request, ctx: RequestContext): Promise<Response> {
  const gateway = gatewayHeadersOf(request, ctx);
  const wantsCatalog =
    gateway.fetchIntegratedModels ||
    request.headers.has("x-gateway-models-endpoint") ||
    request.headers.has("x-portkey-models-endpoint");
  const config =
    wantsCatalog || (!gateway.provider && !gateway.virtualKey && !gateway.config)
      ? undefined
      : await resolveRouting(gateway, ctx);
  // The config's own `fetch_integrated_models` asks for the catalog as the header does.
  if (config && !config.fetchIntegratedModels) {
    const outcome = newOutcome("models", "", false);
    ctx.outcome = outcome;
    return routeInference("models", {}, config, request, ctx, outcome, ctx.traceId);
  }
  const provider = new URL(request.url).searchParams.get("provider");
  const models = (await listedModels()).filter((model) => !provider || model.provider === provider);
  return json({
    object: "list",
    data: models.map((model) => ({
      id: model.id,
      object: "model",
      created: model.releaseDate ? Math.floor(Date.parse(model.releaseDate) / 1000) || catalogCreated : catalogCreated,
      owned_by: model.provider,
      provider: model.provider,
      name: model.name ?? null,
      context_window: model.contextWindow ?? null,
      max_output_tokens: model.maxOutputTokens ?? null,
      capabilities: model.capabilities ?? null,
      pricing: model.pricing ? presentPricing(model.pricing) : null,
    })),
  });
}

/** USD per 1M tokens, its long-context tiers, and the price source's name, version and date. */
function presentPricing(pricing: ListedPricing) {
  return {
    currency: "USD",
    unit: "1M tokens",
    input: pricing.input ?? null,
    output: pricing.output ?? null,
    cache_read: pricing.cacheRead ?? null,
    cache_write: pricing.cacheWrite ?? null,
    ...(pricing.cacheWrite1h !== undefined ? { cache_write_1h: pricing.cacheWrite1h } : {}),
    ...(pricing.reasoning !== undefined ? { reasoning: pricing.reasoning } : {}),
    ...(pricing.tiers
      ? {
          tiers: pricing.tiers.map((tier) => ({
            above_input_tokens: tier.aboveInputTokens,
            input: tier.input ?? null,
            output: tier.output ?? null,
            cache_read: tier.cacheRead ?? null,
          })),
        }
      : {}),
    source: { name: pricing.source.name, version: pricing.source.version ?? null, date: pricing.source.date ?? null },
  };
}

/**
 * GET /v1/models/{model} (OpenAI's retrieve): the model as GET /v1/models lists it, from the same source (the
 * integrated catalog, or the provider's own list when the request names a provider or config); OpenAI's 404
 * `model_not_found` when that source has no such model. The id may hold slashes (`openai/gpt-4o` on a router).
 */
async function retrieveModel(request: Request, ctx: RequestContext): Promise<Response> {
  const path = ctx.path ?? new URL(request.url).pathname;
  const id = decodeURIComponent(path.slice(MODEL_PATH.length));
  const listed = await listModels(request, ctx);
  if (listed.status !== 200) return listed;
  const list = (await listed.json()) as { data?: Array<Record<string, unknown>> };
  const model = Array.isArray(list.data) ? list.data.find((item) => item?.id === id) : undefined;
  if (!model) {
    throw new HttpError(404, `The model '${id}' does not exist or you do not have access to it.`, {
      type: "invalid_request_error",
      param: "model",
      code: "model_not_found",
    });
  }
  return json(model, { headers: withoutLength(listed.headers) });
}

const MODEL_PATH = "/v1/models/";

/** The list's own headers (routing headers of a proxied list) without the length of the list's body. */
function withoutLength(headers: Headers): Record<string, string> {
  const kept: Record<string, string> = {};
  headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "content-type") kept[name] = value;
  });
  return kept;
}

/** Gemini's model calls under `/v1` share this family's path prefix (core/routes/table/models.ts). */
export const handlers: HandlerMap = { listModels, retrieveModel, geminiModelCall };

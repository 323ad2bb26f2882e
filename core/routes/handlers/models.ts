import { catalogModels } from "../../inference/catalog/load.ts";
import type { HandlerMap } from "../../http/context.ts";
import type { RequestContext } from "../../services.ts";
import { json } from "../../http/json.ts";
import { resolveRouting } from "../../inference/routing/source.ts";
import { routeInference } from "../../inference/gateway/inference.ts";
import { newOutcome } from "../../inference/gateway/outcome.ts";
import { gatewayHeadersOf } from "../../inference/gateway/plan.ts";

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
  const models = (await catalogModels()).filter((model) => !provider || model.provider === provider);
  return json({
    object: "list",
    data: models.map((model) => ({
      id: model.id,
      object: "model",
      created: model.releaseDate ? Math.floor(Date.parse(model.releaseDate) / 1000) || catalogCreated : catalogCreated,
      owned_by: model.provider,
      provider: model.provider,
      name: model.name,
      context_window: model.contextWindow ?? null,
      max_output_tokens: model.maxOutputTokens ?? null,
      capabilities: model.capabilities,
      pricing: model.prices
        ? {
            currency: "USD",
            unit: "1M tokens",
            input: model.prices.input ?? null,
            output: model.prices.output ?? null,
            cache_read: model.prices.cacheRead ?? null,
            cache_write: model.prices.cacheWrite ?? null,
          }
        : null,
    })),
  });
}

export const handlers: HandlerMap = { listModels };

import { listCatalogModels } from "../catalog/catalog.ts";
import type { RequestContext } from "../http/context.ts";
import { gatewayHeader } from "../http/gateway-headers.ts";
import { json } from "../http/json.ts";
import { UpstreamError } from "../providers/types.ts";
import { callTarget } from "./call-target.ts";
import { requestTimeoutMs, upstreamToHttp } from "./inference.ts";
import { newOutcome } from "./outcome.ts";
import { targetFromHeaders } from "./target-from-headers.ts";

const catalogCreated = Math.floor(Date.parse("2024-01-01T00:00:00Z") / 1000);

/**
 * GET /v1/models (spec 4.6): the integrated catalog, unless the request names a provider, in which case the
 * provider's own list is proxied. `x-gateway-fetch-integrated-models: true` or `x-gateway-models-endpoint`
 * ask for the catalog even then. `?provider=` filters the catalog.
 */
export async function listModels(request: Request, ctx: RequestContext): Promise<Response> {
  const headers = request.headers;
  const wantsCatalog =
    gatewayHeader(headers, "fetch-integrated-models")?.toLowerCase() === "true" ||
    gatewayHeader(headers, "models-endpoint") !== null;
  const target = wantsCatalog ? undefined : await targetFromHeaders(headers, ctx.services.trustedHosts);
  if (target) {
    const outcome = newOutcome("models", "", false);
    try {
      return await callTarget({
        route: "models",
        body: {},
        target,
        timeoutMs: requestTimeoutMs(headers, ctx.services.settings.REQUEST_TIMEOUT),
        signal: ctx.signal,
        requestId: ctx.traceId,
        outcome,
        startedAt: ctx.startedAt,
      });
    } catch (error) {
      throw error instanceof UpstreamError ? upstreamToHttp(error, target.provider) : error;
    }
  }
  const provider = new URL(request.url).searchParams.get("provider");
  const models = listCatalogModels().filter((model) => !provider || model.provider === provider);
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

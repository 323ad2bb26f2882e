import { mapUpstreamError } from "../errors.ts";
import { encodeForm } from "../form-body.ts";
import type { ProviderAdapter, ProviderTarget, RouteAdapter, RouteKind } from "../types.ts";
import { joinUrl } from "../url.ts";
import {
  fromStabilityResponse,
  mapStabilityError,
  stabilityEndpoint,
  stabilityUsage,
  toStabilityForm,
} from "./images.ts";

/**
 * Stability AI (`stability-ai`): image generations and edits (inpainting) through the Stable Image API
 * (images.ts), bearer auth. A custom host replaces https://api.stability.ai.
 */

export const STABILITY_BASE_URL = "https://api.stability.ai";

function baseUrlOf(target: ProviderTarget): string {
  return target.customHost ?? STABILITY_BASE_URL;
}

function authHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
}

function imageRoute(route: RouteKind): RouteAdapter {
  return {
    async buildRequest(body, ctx) {
      const endpoint = stabilityEndpoint(route, ctx.model ?? body.model);
      const encoded = await encodeForm(toStabilityForm(route, body, endpoint));
      return {
        url: joinUrl(baseUrlOf(ctx.target), endpoint.path),
        method: "POST",
        headers: {
          ...ctx.target.forwardHeaders,
          ...authHeaders(ctx.target),
          accept: "application/json",
          "content-type": encoded.contentType,
        },
        body: encoded.body,
      };
    },
    transformResponse: fromStabilityResponse,
    usageOf: stabilityUsage,
  };
}

export const stabilityAdapter: ProviderAdapter = {
  id: "stability-ai",
  name: "Stability AI",
  routes: { image_generations: imageRoute("image_generations"), image_edits: imageRoute("image_edits") },
  mapError: (status, text) => mapStabilityError(status, text) ?? mapUpstreamError(status, text),
  passthrough: (target) => ({
    baseUrl: baseUrlOf(target),
    headers: { ...target.forwardHeaders, ...authHeaders(target) },
  }),
};

import { multipartRequest } from "../openai/compatible.ts";
import type { RouteAdapter, RouteKind, TransformContext } from "../types.ts";

/**
 * Images on Azure OpenAI: OpenAI's bodies and answers at Azure's URLs
 *   {resource}/openai/deployments/{deployment}/images/generations?api-version=…   (JSON)
 *   {resource}/openai/deployments/{deployment}/images/edits?api-version=…         (multipart, gpt-image-1)
 * (https://learn.microsoft.com/azure/ai-foundry/openai/reference-preview#image-generations). Image edits exist
 * only from the 2025-04-01-preview data-plane version on, so that is their default version; generations keep
 * the GA default. With api-version `v1` the deployment travels in the body's `model`, as for the other routes.
 */

export const AZURE_OPENAI_IMAGE_EDITS_API_VERSION = "2025-04-01-preview";

function withDefaultVersion(ctx: TransformContext, version: string): TransformContext {
  if (ctx.target.azure?.apiVersion) return ctx;
  return { ...ctx, target: { ...ctx.target, azure: { ...ctx.target.azure, apiVersion: version } } };
}

/** What the routes need from index.ts (passed in: index.ts imports this module). */
interface AzureUrls {
  url(kind: RouteKind, ctx: TransformContext): string;
  authHeaders(apiKey: string | undefined): Record<string, string>;
}

function imageRoute(kind: RouteKind, azure: AzureUrls): RouteAdapter {
  return {
    buildRequest(body, ctx) {
      const routed = kind === "image_edits" ? withDefaultVersion(ctx, AZURE_OPENAI_IMAGE_EDITS_API_VERSION) : ctx;
      const url = azure.url(kind, routed);
      const deployment = ctx.target.azure?.deploymentId;
      const payload = ctx.target.azure?.apiVersion === "v1" && deployment ? { ...body, model: deployment } : body;
      const headers = { ...azure.authHeaders(ctx.target.apiKey), ...ctx.target.forwardHeaders };
      if (kind === "image_edits") return multipartRequest(url, headers, payload);
      return {
        url,
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: JSON.stringify(payload),
      };
    },
    transformResponse: (upstream) => upstream,
  };
}

/** Azure OpenAI serves generations (DALL-E 3, gpt-image-1) and edits (gpt-image-1); it has no variations. */
export function azureImageRoutes(azure: AzureUrls): Partial<Record<RouteKind, RouteAdapter>> {
  return { image_generations: imageRoute("image_generations", azure), image_edits: imageRoute("image_edits", azure) };
}

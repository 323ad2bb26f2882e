import type { RouteAdapter, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";
import { azureResource } from "./endpoints.ts";

/**
 * Mistral OCR deployed on Azure AI Foundry (`azure-ai`): Mistral's OCR body and answer at
 * https://{resourceName}.services.ai.azure.com/providers/mistral/azure/ocr, the deployment (e.g.
 * `mistral-document-ai-2505`) in `model` (Microsoft Learn, "How to use image-to-text models": Mistral Document AI).
 * Azure's OCR reads documents as base64 data URLs only, which is what a gateway file id becomes. A custom host
 * replaces the resource's origin (a trailing `/models`, the inference API's base, is dropped).
 */
export const AZURE_MISTRAL_OCR_PATH = "/providers/mistral/azure/ocr";

export function azureOcrUrl(ctx: Pick<TransformContext, "target">): string {
  const custom = ctx.target.customHost;
  if (custom) return joinUrl(custom.replace(/\/models\/?$/, ""), AZURE_MISTRAL_OCR_PATH);
  const resource = azureResource(ctx, "azure-ai");
  return joinUrl(`https://${resource}.services.ai.azure.com`, AZURE_MISTRAL_OCR_PATH);
}

export function azureOcrRoute(authHeaders: (apiKey: string | undefined) => Record<string, string>): RouteAdapter {
  return {
    buildRequest(body, ctx) {
      const deployment = ctx.target.azure?.deploymentId;
      return {
        url: azureOcrUrl(ctx),
        method: "POST",
        headers: {
          ...authHeaders(ctx.target.apiKey),
          ...ctx.target.forwardHeaders,
          "content-type": "application/json",
        },
        body: JSON.stringify(deployment && body.model !== deployment ? { ...body, model: deployment } : body),
      };
    },
    transformResponse: (upstream) => upstream,
  };
}

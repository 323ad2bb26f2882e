import { multipartRequest, prepareCompatibleBody, rawAnswerOf, streamOfRoute } from "../openai/compatible.ts";
import type { ProviderAdapter, RouteAdapter, RouteKind, TransformContext } from "../types.ts";
import { MULTIPART_ROUTES } from "../types.ts";
import { azureAIUrl, azureAuthHeaders, azureOpenAIUrl } from "./endpoints.ts";
import { azureAIPassthrough, azureOpenAIPassthrough } from "./passthrough.ts";
import { azureImageRoutes } from "./images.ts";
import { azureOcrRoute } from "./ocr.ts";

/**
 * Azure OpenAI (`azure-openai`): OpenAI bodies and answers, Azure URLs and auth.
 *   https://{resourceName}.openai.azure.com/openai/deployments/{deploymentId}/{route}?api-version={apiVersion}
 * from `target.azure` (deploymentId defaults to the model name, apiVersion to the latest GA data-plane
 * inference version). A custom host replaces `https://{resourceName}.openai.azure.com` (the origin only).
 * apiVersion `v1` selects Azure's version-less OpenAI-style API: {origin}/openai/v1/{route}, the deployment
 * going in the body's `model`.
 *
 * Azure AI Foundry models (`azure-ai`): https://{resourceName}.services.ai.azure.com/models/{route}?api-version=…
 * with the deployment name in `model`. A custom host replaces that whole base (so serverless endpoints such as
 * https://{name}.{region}.models.ai.azure.com work too).
 */

interface AzureFlavour {
  id: string;
  name: string;
  routes: RouteKind[];
  url(kind: RouteKind, ctx: TransformContext): string;
  /** Body fields set from the target (deployment names travelling in `model`). */
  model?(ctx: TransformContext): string | undefined;
  noStreamOptions?: boolean;
  headers?: Record<string, string>;
  passthrough: ProviderAdapter["passthrough"];
}

const AUDIO_ROUTES: ReadonlySet<RouteKind> = new Set(["speech", "transcriptions", "translations"]);

function createAzureAdapter(flavour: AzureFlavour): ProviderAdapter {
  const routes: Partial<Record<RouteKind, RouteAdapter>> = {};
  for (const kind of flavour.routes) {
    routes[kind] = {
      buildRequest(body, ctx) {
        const url = flavour.url(kind, ctx);
        const model = flavour.model?.(ctx);
        const source = model && body.model !== model ? { ...body, model } : body;
        const payload = prepareCompatibleBody({ noStreamOptions: flavour.noStreamOptions }, source, ctx, kind);
        const headers: Record<string, string> = {
          ...flavour.headers,
          ...azureAuthHeaders(ctx.target.apiKey),
          ...ctx.target.forwardHeaders,
        };
        // Audio input (and image edits) go as OpenAI's multipart forms.
        if (MULTIPART_ROUTES.has(kind)) return multipartRequest(url, headers, payload);
        headers["content-type"] = "application/json";
        return { url, method: "POST", headers, body: JSON.stringify(payload) };
      },
      transformResponse: (upstream) => upstream,
      stream: streamOfRoute(kind),
      // Speech audio and text transcripts are relayed as they arrive, as from OpenAI.
      ...(AUDIO_ROUTES.has(kind) && { rawAnswer: (body: Record<string, any>) => rawAnswerOf(kind, body) }),
    };
  }
  return { id: flavour.id, name: flavour.name, routes, passthrough: flavour.passthrough };
}

const azureOpenAIBase: ProviderAdapter = createAzureAdapter({
  id: "azure-openai",
  name: "Azure OpenAI",
  // Audio: /openai/deployments/{deployment}/audio/{speech|transcriptions|translations} (GA since 2024-10-21).
  routes: ["chat", "completions", "embeddings", "responses", "speech", "transcriptions", "translations"],
  url: azureOpenAIUrl,
  passthrough: azureOpenAIPassthrough,
  // The v1 API and the Responses API route by `model`; the deployment id (when configured) is the name Azure knows.
  model: (ctx) =>
    ctx.target.azure?.apiVersion === "v1" || ctx.route === "responses"
      ? ctx.target.azure?.deploymentId || undefined
      : undefined,
});

/** Images (generations as JSON, edits as multipart) are built in images.ts. */
export const azureOpenAIAdapter: ProviderAdapter = {
  ...azureOpenAIBase,
  routes: { ...azureOpenAIBase.routes, ...azureImageRoutes({ url: azureOpenAIUrl, authHeaders: azureAuthHeaders }) },
};

const azureAIInference = createAzureAdapter({
  id: "azure-ai",
  name: "Azure AI Foundry Models",
  routes: ["chat", "embeddings"],
  url: azureAIUrl,
  passthrough: azureAIPassthrough,
  model: (ctx) => ctx.target.azure?.deploymentId || undefined,
  // The model inference API rejects unknown fields unless told otherwise: OpenAI fields it does not define
  // reach the model (`extra-parameters: pass-through`). stream_options is not part of that API.
  noStreamOptions: true,
  headers: { "extra-parameters": "pass-through" },
});

/** Azure AI Foundry: the model inference API, and Mistral OCR at its own path (./ocr.ts). */
export const azureAIAdapter: ProviderAdapter = {
  ...azureAIInference,
  routes: { ...azureAIInference.routes, ocr: azureOcrRoute(azureAuthHeaders) },
};

import {
  multipartRequest,
  prepareCompatibleBody,
  ROUTE_PATHS,
  rawAnswerOf,
  streamOfRoute,
} from "../openai/compatible.ts";
import type { ProviderAdapter, ProviderTarget, RouteAdapter, RouteKind, TransformContext } from "../types.ts";
import { MULTIPART_ROUTES, UpstreamError } from "../types.ts";
import { hostValueProblem } from "../../security/host-values.ts";
import { joinUrl } from "../url.ts";
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

/** Latest GA data-plane inference version of Azure OpenAI (chat, completions, embeddings, stream_options). */
export const AZURE_OPENAI_API_VERSION = "2024-10-21";
/** The Responses API is not under /deployments: it takes the deployment in `model`, at this version or later. */
export const AZURE_OPENAI_RESPONSES_API_VERSION = "2025-04-01-preview";
/** Version of the Azure AI Model Inference API. */
export const AZURE_AI_INFERENCE_API_VERSION = "2024-05-01-preview";

/**
 * Azure accepts an API key (`api-key` header) or a Microsoft Entra ID access token (`Authorization: Bearer`).
 * Entra tokens are JWTs (three base64url segments, the header starting `eyJ`); Azure keys are hex or
 * alphanumeric strings without dots, so the shape tells them apart.
 */
export function looksLikeEntraToken(key: string): boolean {
  return /^eyJ[\w-]*\.[\w-]+\.[\w-]*$/.test(key);
}

export function azureAuthHeaders(apiKey: string | undefined): Record<string, string> {
  if (!apiKey) return {};
  return looksLikeEntraToken(apiKey) ? { authorization: `Bearer ${apiKey}` } : { "api-key": apiKey };
}

function resourceOrigin(
  ctx: Pick<TransformContext, "target">,
  host: (resource: string) => string,
  providerId: string,
): string {
  if (ctx.target.customHost) return ctx.target.customHost;
  const resource = ctx.target.azure?.resourceName;
  if (!resource) {
    throw new UpstreamError(400, `provider ${providerId} needs an Azure resource name or a custom host`, {
      code: "azure_resource_required",
    });
  }
  const problem = hostValueProblem("resource_name", resource);
  if (problem) {
    throw new UpstreamError(400, `Invalid Azure resource name: ${problem}`, {
      code: "azure_resource_invalid",
      param: "resource_name",
    });
  }
  return host(resource);
}

/** The origin of an Azure OpenAI resource (custom host, else `https://{resourceName}.openai.azure.com`). */
export function azureOpenAIOrigin(target: ProviderTarget): string {
  return resourceOrigin({ target }, (resource) => `https://${resource}.openai.azure.com`, "azure-openai");
}

/** The base of an Azure AI Foundry models resource (custom host, else `https://{resourceName}.services.ai.azure.com/models`). */
export function azureAIBase(target: ProviderTarget): string {
  return resourceOrigin({ target }, (resource) => `https://${resource}.services.ai.azure.com/models`, "azure-ai");
}

/** The upstream URL of an Azure OpenAI route. */
export function azureOpenAIUrl(kind: RouteKind, ctx: TransformContext): string {
  const origin = resourceOrigin(ctx, (resource) => `https://${resource}.openai.azure.com`, "azure-openai");
  const apiVersion = ctx.target.azure?.apiVersion || AZURE_OPENAI_API_VERSION;
  if (apiVersion === "v1") return joinUrl(origin, `/openai/v1${ROUTE_PATHS[kind]}`);
  if (kind === "responses") {
    const version = ctx.target.azure?.apiVersion || AZURE_OPENAI_RESPONSES_API_VERSION;
    return `${joinUrl(origin, "/openai/responses")}?api-version=${encodeURIComponent(version)}`;
  }
  const deployment = ctx.target.azure?.deploymentId || ctx.model;
  if (!deployment) throw new UpstreamError(400, "azure-openai needs a deployment id or a model", { param: "model" });
  const path = `/openai/deployments/${encodeURIComponent(deployment)}${ROUTE_PATHS[kind]}`;
  return `${joinUrl(origin, path)}?api-version=${encodeURIComponent(apiVersion)}`;
}

/** The upstream URL of an Azure AI Foundry models route. */
export function azureAIUrl(kind: RouteKind, ctx: TransformContext): string {
  const base = resourceOrigin(ctx, (resource) => `https://${resource}.services.ai.azure.com/models`, "azure-ai");
  const apiVersion = ctx.target.azure?.apiVersion || AZURE_AI_INFERENCE_API_VERSION;
  return `${joinUrl(base, ROUTE_PATHS[kind])}?api-version=${encodeURIComponent(apiVersion)}`;
}

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

import { hostValueProblem } from "../../security/host-values.ts";
import { ROUTE_PATHS } from "../openai/compatible.ts";
import type { ProviderTarget, RouteKind, TransformContext } from "../types.ts";
import { UpstreamError } from "../types.ts";
import { joinUrl } from "../url.ts";

/**
 * Where Azure's APIs live and how they are authenticated: the URLs of Azure OpenAI and Azure AI Foundry routes
 * from `target.azure` (see ./index.ts), shared by the adapter, pass-through, files, batches, assistants and
 * realtime.
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

/** The target's Azure resource name, checked (provider `providerId` without one, or an invalid one, is a 400). */
export function azureResource(ctx: Pick<TransformContext, "target">, providerId: string): string {
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
  return resource;
}

function resourceOrigin(
  ctx: Pick<TransformContext, "target">,
  host: (resource: string) => string,
  providerId: string,
): string {
  if (ctx.target.customHost) return ctx.target.customHost;
  return host(azureResource(ctx, providerId));
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

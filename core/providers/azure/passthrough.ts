import type { PassthroughContext, PassthroughEndpoint, ProviderTarget } from "../types.ts";
import { joinUrl } from "../url.ts";
import {
  AZURE_AI_INFERENCE_API_VERSION,
  AZURE_OPENAI_API_VERSION,
  azureAIBase,
  azureAuthHeaders,
  azureOpenAIOrigin,
} from "./endpoints.ts";

/**
 * Pass-through to Azure (https://learn.microsoft.com/en-us/azure/ai-foundry/openai/reference): Azure OpenAI at
 * `https://{resourceName}.openai.azure.com/openai` + the client's path (`/deployments/{id}/chat/completions`,
 * `/files`, `/batches`...), Azure AI Foundry models at `https://{resourceName}.services.ai.azure.com/models` + the
 * client's path; the key in `api-key` (an Entra token as `Authorization: Bearer`). Every versioned Azure call
 * needs `api-version`: the client's own query wins, else the target's version (or the latest GA one) is added.
 * API version `v1` is Azure OpenAI's version-less API: `/openai/v1` + the client's path, no query added.
 */
export function azureOpenAIPassthrough(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint {
  const origin = azureOpenAIOrigin(target);
  const headers = authHeaders(target);
  const version = target.azure?.apiVersion || AZURE_OPENAI_API_VERSION;
  if (version === "v1") return { baseUrl: joinUrl(origin, "/openai/v1"), headers };
  return { baseUrl: joinUrl(origin, "/openai"), headers, path: withApiVersion(ctx, version) };
}

export function azureAIPassthrough(target: ProviderTarget, ctx: PassthroughContext): PassthroughEndpoint {
  const version = target.azure?.apiVersion || AZURE_AI_INFERENCE_API_VERSION;
  return { baseUrl: azureAIBase(target), headers: authHeaders(target), path: withApiVersion(ctx, version) };
}

function authHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(target.forwardHeaders ?? {})) headers[name.toLowerCase()] = value;
  return { ...headers, ...azureAuthHeaders(target.apiKey) };
}

/** The client's path and query with `api-version` added when the client gave none (undefined: keep them). */
function withApiVersion(ctx: PassthroughContext, version: string): string | undefined {
  if (ctx.path === undefined) return undefined;
  const search = ctx.search ?? "";
  if (new URLSearchParams(search).has("api-version")) return undefined;
  const added = `api-version=${encodeURIComponent(version)}`;
  return `${ctx.path}${search.length > 1 ? `${search}&${added}` : `?${added}`}`;
}

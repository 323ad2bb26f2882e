import { azureAuthHeaders, azureOpenAIOrigin } from "../../providers/azure/endpoints.ts";
import { loadProvider } from "../../providers/registry.ts";
import type { PassthroughContext, ProviderTarget } from "../../providers/types.ts";
import { UpstreamError } from "../../providers/types.ts";
import { joinUrl } from "../../providers/url.ts";

/**
 * Assistants v2 came to Azure OpenAI with this preview data-plane version (Azure's API version lifecycle page); the
 * GA inference versions the chat routes default to do not serve it.
 */
export const AZURE_ASSISTANTS_API_VERSION = "2024-05-01-preview";

/** Where an Assistants API call goes and with which auth headers. */
export interface AssistantsEndpoint {
  url: string;
  headers: Record<string, string>;
}

/**
 * The upstream URL and auth of `path` (the client's path after `/v1`, e.g. `/threads/thread_1/runs`) for a
 * target. OpenAI: its pass-through base (custom host applied) + path. Azure OpenAI:
 * `{origin}/openai{path}?api-version=...` with `api-key` (the client's own `api-version` query wins, else the
 * target's version, else AZURE_ASSISTANTS_API_VERSION); version `v1` is Azure's version-less API at
 * `{origin}/openai/v1{path}`. Other providers have no Assistants API: 400 `unsupported_route`.
 */
export async function assistantsEndpoint(
  target: ProviderTarget,
  path: string,
  /** The client's query string (`?...` or empty), forwarded as it is. */
  search: string,
  ctx: PassthroughContext,
): Promise<AssistantsEndpoint> {
  if (target.provider === "openai") {
    const adapter = (await loadProvider("openai"))!;
    const endpoint = await adapter.passthrough!(target, ctx);
    return { url: joinUrl(endpoint.baseUrl, path) + search, headers: endpoint.headers };
  }
  if (target.provider === "azure-openai") {
    const origin = azureOpenAIOrigin(target);
    const headers = { ...azureAuthHeaders(target.apiKey), ...target.forwardHeaders };
    const version = target.azure?.apiVersion;
    if (version === "v1") return { url: joinUrl(origin, `/openai/v1${path}`) + search, headers };
    const query = new URLSearchParams(search);
    if (query.has("api-version")) return { url: joinUrl(origin, `/openai${path}`) + search, headers };
    const versioned = `api-version=${encodeURIComponent(version || AZURE_ASSISTANTS_API_VERSION)}`;
    return { url: `${joinUrl(origin, `/openai${path}`)}${search ? `${search}&` : "?"}${versioned}`, headers };
  }
  throw new UpstreamError(400, `Provider '${target.provider}' does not support the Assistants API.`, {
    code: "unsupported_route",
    param: "x-gateway-provider",
  });
}

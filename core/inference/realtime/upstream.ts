import { azureAuthHeaders, azureOpenAIOrigin } from "../../providers/azure/endpoints.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import { UpstreamError } from "../../providers/types.ts";
import { joinUrl } from "../../providers/url.ts";

/** Where a realtime session is opened, and with which headers (the provider's credentials among them). */
export interface UpstreamSocketRequest {
  url: string;
  headers: Record<string, string>;
}

/** Providers with a realtime WebSocket API. */
export const REALTIME_PROVIDERS = ["openai", "azure-openai"] as const;

const OPENAI_BASE = "https://api.openai.com/v1";
/** Azure OpenAI's realtime preview API version, when neither the target nor the client names one. */
export const AZURE_REALTIME_API_VERSION = "2024-10-01-preview";

/**
 * The provider's realtime endpoint for one target:
 * - OpenAI: `wss://api.openai.com/v1/realtime?model=…` (the client's query as sent), `Authorization: Bearer`
 *   (OpenAI Realtime API guide, "WebSocket": connecting from a server);
 * - Azure OpenAI: `wss://{resource}.openai.azure.com/openai/realtime?api-version=…&deployment=…` with `api-key`
 *   (or an Entra token as Bearer); api-version `v1` selects the GA path `/openai/v1/realtime?model=…`
 *   (Azure OpenAI "GPT Realtime API via WebSockets").
 * A custom host replaces the base (OpenAI) or the origin (Azure); http(s) becomes ws(s).
 * `OpenAI-Beta` goes along when the client sent it (the beta protocol needs it); the target's forward headers
 * too. No other client header is forwarded: the client's gateway key and Authorization stay here.
 */
export function realtimeUpstream(
  target: ProviderTarget,
  clientUrl: URL,
  clientHeaders: Headers,
): UpstreamSocketRequest {
  const beta = clientHeaders.get("openai-beta");
  const common: Record<string, string> = { ...target.forwardHeaders, ...(beta ? { "openai-beta": beta } : {}) };
  if (target.provider === "openai") {
    const url = new URL(joinUrl(target.customHost ?? OPENAI_BASE, "/realtime"));
    url.search = clientUrl.search;
    return {
      url: asWebSocketUrl(url),
      headers: { ...common, ...(target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}) },
    };
  }
  if (target.provider === "azure-openai") {
    const query = clientUrl.searchParams;
    const origin = azureOpenAIOrigin(target);
    const apiVersion = target.azure?.apiVersion || query.get("api-version") || AZURE_REALTIME_API_VERSION;
    const deployment = target.azure?.deploymentId || query.get("deployment") || query.get("model");
    if (!deployment) {
      throw new UpstreamError(400, "Azure OpenAI realtime needs a deployment: the `deployment` query parameter.", {
        code: "missing_deployment",
        param: "deployment",
      });
    }
    const url =
      apiVersion === "v1"
        ? new URL(`${joinUrl(origin, "/openai/v1/realtime")}?model=${encodeURIComponent(deployment)}`)
        : new URL(
            `${joinUrl(origin, "/openai/realtime")}?api-version=${encodeURIComponent(apiVersion)}&deployment=${encodeURIComponent(deployment)}`,
          );
    return { url: asWebSocketUrl(url), headers: { ...common, ...azureAuthHeaders(target.apiKey) } };
  }
  throw new UpstreamError(
    400,
    `Provider '${target.provider}' has no realtime API here; realtime sessions go to ${REALTIME_PROVIDERS.join(" or ")}.`,
    { code: "unsupported_route", param: "x-gateway-provider" },
  );
}

/** The model a session is for, as the client named it: `model` (OpenAI), else Azure's `deployment`. */
export function requestedRealtimeModel(target: ProviderTarget | undefined, clientUrl: URL): string {
  const query = clientUrl.searchParams;
  return (
    query.get("model") ??
    target?.azure?.modelName ??
    target?.azure?.deploymentId ??
    query.get("deployment") ??
    ""
  ).slice(0, 256);
}

function asWebSocketUrl(url: URL): string {
  if (url.protocol === "https:") url.protocol = "wss:";
  else if (url.protocol === "http:") url.protocol = "ws:";
  url.hash = "";
  return url.href;
}

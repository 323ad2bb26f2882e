import {
  callProviderJson,
  jsonBody,
  type ProviderCallOptions,
  providerStream,
} from "../batches/native/provider-http.ts";
import { AZURE_FILES_API_VERSION } from "../files/provider-files.ts";
import { badRequest } from "../http/errors.ts";
import { azureAuthHeaders, azureOpenAIOrigin } from "../providers/azure/index.ts";
import { loadProvider } from "../providers/registry.ts";
import type { ProviderTarget } from "../providers/types.ts";
import { UpstreamError } from "../providers/types.ts";
import { joinUrl } from "../providers/url.ts";

/**
 * The providers' fine-tuning APIs in OpenAI's shape:
 *   OpenAI        <base>/fine_tuning/jobs[/{id}[/cancel|/events|/checkpoints]], <base>/files/{id}[/content]
 *   Azure OpenAI  <resource>/openai/fine_tuning/jobs...?api-version=2024-10-21 (or later), or /openai/v1/...
 * Vertex AI tuning jobs and Bedrock model customisation jobs read their data from the customer's own bucket: not
 * supported (400 unsupported_provider).
 */

export const FINE_TUNING_PROVIDERS: ReadonlySet<string> = new Set(["openai", "azure-openai"]);

export function checkFineTuningProvider(target: ProviderTarget): void {
  if (FINE_TUNING_PROVIDERS.has(target.provider)) return;
  throw badRequest(
    `Fine-tuning through the gateway supports the providers ${[...FINE_TUNING_PROVIDERS].join(" and ")}; '${target.provider}' is not supported (Vertex AI tuning jobs and Bedrock model customisation jobs need the data in your own bucket: create them with the provider directly).`,
    "x-gateway-provider",
    "unsupported_provider",
  );
}

/** `<base><path>` with the query and the provider's auth headers. */
async function endpoint(
  target: ProviderTarget,
  path: string,
  query: Record<string, string | number | undefined> = {},
): Promise<{ url: string; headers: Record<string, string> }> {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) search.set(name, String(value));
  if (target.provider === "azure-openai") {
    const origin = azureOpenAIOrigin(target);
    const headers = { ...azureAuthHeaders(target.apiKey), ...target.forwardHeaders };
    const version = target.azure?.apiVersion;
    if (version === "v1") {
      const suffix = search.size ? `?${search}` : "";
      return { url: `${joinUrl(origin, `/openai/v1${path}`)}${suffix}`, headers };
    }
    search.set("api-version", version && version >= AZURE_FILES_API_VERSION ? version : AZURE_FILES_API_VERSION);
    return { url: `${joinUrl(origin, `/openai${path}`)}?${search}`, headers };
  }
  const adapter = await loadProvider(target.provider);
  const base = adapter?.passthrough?.(target);
  if (!base || !FINE_TUNING_PROVIDERS.has(target.provider)) {
    throw new UpstreamError(400, `Provider '${target.provider}' has no fine-tuning API.`, {
      code: "unsupported_provider",
    });
  }
  const suffix = search.size ? `?${search}` : "";
  return { url: `${joinUrl(base.baseUrl, path)}${suffix}`, headers: base.headers };
}

const jobPath = (providerJobId: string, tail = "") => `/fine_tuning/jobs/${encodeURIComponent(providerJobId)}${tail}`;

export async function createProviderJob(
  target: ProviderTarget,
  body: Record<string, unknown>,
  options: ProviderCallOptions,
): Promise<any> {
  const { url, headers } = await endpoint(target, "/fine_tuning/jobs");
  return callProviderJson(jsonBody("POST", url, headers, body), options);
}

export async function getProviderJob(target: ProviderTarget, providerJobId: string, options: ProviderCallOptions) {
  const { url, headers } = await endpoint(target, jobPath(providerJobId));
  return callProviderJson({ url, method: "GET", headers }, options);
}

export async function cancelProviderJob(target: ProviderTarget, providerJobId: string, options: ProviderCallOptions) {
  const { url, headers } = await endpoint(target, jobPath(providerJobId, "/cancel"));
  return callProviderJson({ url, method: "POST", headers }, options);
}

export async function listProviderJobItems(
  target: ProviderTarget,
  providerJobId: string,
  kind: "events" | "checkpoints",
  query: { after?: string; limit: number },
  options: ProviderCallOptions,
): Promise<any> {
  const { url, headers } = await endpoint(target, jobPath(providerJobId, `/${kind}`), query);
  return callProviderJson({ url, method: "GET", headers }, options);
}

/** A provider file's object (its filename) and its content as a stream. */
export async function providerFile(
  target: ProviderTarget,
  fileId: string,
  options: ProviderCallOptions,
): Promise<{ filename: string; body: ReadableStream<Uint8Array> }> {
  const info = await endpoint(target, `/files/${encodeURIComponent(fileId)}`);
  const file = await callProviderJson({ url: info.url, method: "GET", headers: info.headers }, options);
  const content = await endpoint(target, `/files/${encodeURIComponent(fileId)}/content`);
  const body = await providerStream({ url: content.url, method: "GET", headers: content.headers }, options);
  return { filename: typeof file?.filename === "string" && file.filename ? file.filename : `${fileId}.csv`, body };
}

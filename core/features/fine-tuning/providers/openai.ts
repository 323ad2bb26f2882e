import {
  callProviderJson,
  jsonBody,
  type ProviderCallOptions,
  providerStream,
} from "../../batches/native/provider-http.ts";
import { AZURE_FILES_API_VERSION, ensureProviderFile } from "../../files/provider-files.ts";
import { azureAuthHeaders, azureOpenAIOrigin } from "../../../providers/azure/endpoints.ts";
import { loadProvider } from "../../../providers/registry.ts";
import type { ProviderTarget } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";
import { joinUrl } from "../../../providers/url.ts";
import type { FineTuningProviderApi, ProviderJob } from "../provider-api.ts";

/**
 * OpenAI's fine-tuning API, which the job shape already is:
 *   OpenAI        <base>/fine_tuning/jobs[/{id}[/cancel|/events|/checkpoints]], <base>/files/{id}[/content]
 *   Azure OpenAI  <resource>/openai/fine_tuning/jobs...?api-version=2024-10-21 (or later), or /openai/v1/...
 * The training and validation files reach the provider through its Files API (ensureProviderFile).
 */

const PROVIDERS: ReadonlySet<string> = new Set(["openai", "azure-openai"]);

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
  const base = await adapter?.passthrough?.(target, {});
  if (!base || !PROVIDERS.has(target.provider)) {
    throw new UpstreamError(400, `Provider '${target.provider}' has no fine-tuning API.`, {
      code: "unsupported_provider",
    });
  }
  const suffix = search.size ? `?${search}` : "";
  return { url: `${joinUrl(base.baseUrl, path)}${suffix}`, headers: base.headers };
}

const jobPath = (providerJobId: string, tail = "") => `/fine_tuning/jobs/${encodeURIComponent(providerJobId)}${tail}`;

/** `POST /fine_tuning/jobs` with the body as OpenAI takes it (files named by the provider's ids). */
export async function createProviderJob(
  target: ProviderTarget,
  body: Record<string, unknown>,
  options: ProviderCallOptions,
): Promise<any> {
  const { url, headers } = await endpoint(target, "/fine_tuning/jobs");
  return callProviderJson(jsonBody("POST", url, headers, body), options);
}

async function listItems(
  target: ProviderTarget,
  providerJobId: string,
  kind: "events" | "checkpoints",
  query: { after?: string; limit: number },
  options: ProviderCallOptions,
) {
  const { url, headers } = await endpoint(target, jobPath(providerJobId, `/${kind}`), query);
  const page = await callProviderJson({ url, method: "GET", headers }, options);
  return { data: Array.isArray(page?.data) ? page.data : [], has_more: page?.has_more === true };
}

export const openAIFineTuning: FineTuningProviderApi = {
  async create({ input, training, validation }, ctx) {
    const trainingId = await ensureProviderFile(ctx.services, training, ctx.target, ctx.signal);
    const validationId = validation
      ? await ensureProviderFile(ctx.services, validation, ctx.target, ctx.signal)
      : undefined;
    const body: Record<string, unknown> = { model: input.model, training_file: trainingId };
    if (validationId) body.validation_file = validationId;
    for (const name of ["suffix", "hyperparameters", "method", "seed", "integrations", "metadata"] as const) {
      if (input[name] !== undefined && input[name] !== null) body[name] = input[name];
    }
    return createProviderJob(ctx.target, body, ctx);
  },

  async get(providerJobId, ctx) {
    const { url, headers } = await endpoint(ctx.target, jobPath(providerJobId));
    return callProviderJson<ProviderJob>({ url, method: "GET", headers }, ctx);
  },

  async cancel(providerJobId, ctx) {
    const { url, headers } = await endpoint(ctx.target, jobPath(providerJobId, "/cancel"));
    return callProviderJson<ProviderJob>({ url, method: "POST", headers }, ctx);
  },

  events: (providerJobId, query, ctx) => listItems(ctx.target, providerJobId, "events", query, ctx),
  checkpoints: (providerJobId, query, ctx) => listItems(ctx.target, providerJobId, "checkpoints", query, ctx),

  async resultFile(fileId, ctx) {
    const info = await endpoint(ctx.target, `/files/${encodeURIComponent(fileId)}`);
    const file = await callProviderJson({ url: info.url, method: "GET", headers: info.headers }, ctx);
    const content = await endpoint(ctx.target, `/files/${encodeURIComponent(fileId)}/content`);
    const body = await providerStream({ url: content.url, method: "GET", headers: content.headers }, ctx);
    return { filename: typeof file?.filename === "string" && file.filename ? file.filename : `${fileId}.csv`, body };
  },
};

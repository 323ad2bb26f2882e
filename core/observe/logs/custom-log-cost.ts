import { priceUsage } from "../../inference/catalog/load.ts";
import type { Cost } from "../../inference/catalog/cost.ts";
import type { PriceOverrides } from "../../inference/catalog/price-override.ts";
import { COMPATIBLE_PROVIDERS } from "../../providers/openai/table.ts";
import { providerIdOf } from "../../providers/registry.ts";
import type { ChatUsage } from "../../providers/types.ts";

/**
 * Prices a custom log (POST /v1/logs: a request that did not pass through the gateway) like a gateway request:
 * the provider is the one the log names, else the one whose API the request URL points at; the model is the
 * request body's, else the answer's, else the one the URL names (Gemini's `/models/{model}:generateContent`,
 * Bedrock's `/model/{id}/converse`); the usage is read in the provider's own shape (OpenAI, Responses,
 * Anthropic, Gemini, Bedrock). What cannot be inferred leaves the log unpriced, saying why.
 */

/** Hosts of the native providers' APIs (the OpenAI-compatible ones come from their table's base URLs). */
const NATIVE_HOSTS: ReadonlyArray<[RegExp, string]> = [
  [/^api\.anthropic\.com$/, "anthropic"],
  [/^generativelanguage\.googleapis\.com$/, "google"],
  [/(^|-)aiplatform\.googleapis\.com$/, "vertex-ai"],
  [/\.openai\.azure\.com$/, "azure-openai"],
  [/^bedrock-runtime(-fips)?\.[\w-]+\.amazonaws\.com$/, "bedrock"],
  [/^api\.cohere\.(com|ai)$/, "cohere"],
];

let compatibleHosts: Map<string, string> | undefined;

/** Our provider id for a request URL, or undefined. */
export function providerOfUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let host: string;
  try {
    host = new URL(url).hostname.toLowerCase();
  } catch {
    return undefined;
  }
  for (const [pattern, provider] of NATIVE_HOSTS) if (pattern.test(host)) return provider;
  compatibleHosts ??= new Map(
    COMPATIBLE_PROVIDERS.filter((row) => row.baseUrl).map((row) => [new URL(row.baseUrl!).hostname, row.id]),
  );
  return compatibleHosts.get(host);
}

/** The model a request URL names (Gemini, Vertex and Bedrock put it in the path), or undefined. */
export function modelOfUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let path: string;
  try {
    path = decodeURIComponent(new URL(url).pathname);
  } catch {
    return undefined;
  }
  return (
    /\/models\/([^/:]+):\w+$/.exec(path)?.[1] ??
    /\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(path)?.[1] ??
    /\/deployments\/([^/]+)\//.exec(path)?.[1]
  );
}

const num = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0);

/** The answer's usage in OpenAI's chat shape, whatever the provider's own shape, or undefined. */
export async function usageOfAnswer(provider: string | undefined, answer: unknown): Promise<ChatUsage | undefined> {
  if (!answer || typeof answer !== "object") return undefined;
  const body = answer as Record<string, any>;
  if (body.usageMetadata && typeof body.usageMetadata === "object")
    return (await import("../../providers/google/chat.ts")).toChatUsage(body.usageMetadata);
  const usage = body.usage;
  if (!usage || typeof usage !== "object") return undefined;
  if (typeof usage.prompt_tokens === "number") return usage as ChatUsage;
  if (typeof usage.inputTokens === "number")
    return (await import("../../providers/bedrock/converse.ts")).mapUsage(usage);
  if (typeof usage.input_tokens !== "number") return undefined;
  // Anthropic counts cache reads and writes apart from input_tokens; Responses' input_tokens includes them.
  if (provider === "anthropic" || body.type === "message" || "cache_creation_input_tokens" in usage)
    return (await import("../../providers/anthropic/messages.ts")).toChatUsage(usage);
  const prompt = num(usage.input_tokens);
  const completion = num(usage.output_tokens);
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: num(usage.input_tokens_details?.cached_tokens) },
    completion_tokens_details: { reasoning_tokens: num(usage.output_tokens_details?.reasoning_tokens) },
  };
}

export interface CustomLogCost {
  provider?: string;
  model?: string;
  usage?: ChatUsage;
  cost: Cost;
}

/** What a custom log's request used and cost; unpriced (and why) when provider, model or usage is unknown. */
export async function customLogCost(
  log: {
    provider?: string;
    url?: string;
    requestBody?: Record<string, any>;
    responseBody?: Record<string, any>;
  },
  overrides: PriceOverrides,
): Promise<CustomLogCost> {
  const provider = (log.provider && providerIdOf(log.provider)) ?? providerOfUrl(log.url) ?? log.provider;
  const model = stringOf(log.requestBody?.model) ?? stringOf(log.responseBody?.model) ?? modelOfUrl(log.url);
  const usage = await usageOfAnswer(provider, log.responseBody);
  const unpriced = (reason: string): CustomLogCost => ({
    provider,
    model,
    usage,
    cost: { total: 0, input: 0, output: 0, priced: false, reason },
  });
  if (!usage) return unpriced("The answer reports no usage.");
  if (!provider) return unpriced("No provider: name it (request.provider) or send the provider's request URL.");
  if (!model) return unpriced("No model in the request body, the answer or the request URL.");
  const cost = await priceUsage(provider, model, usage, await overrides(provider, model));
  return { provider, model, usage, cost };
}

function stringOf(value: unknown): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= 256 ? value : undefined;
}

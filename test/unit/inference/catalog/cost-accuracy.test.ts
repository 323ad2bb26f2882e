import { calcPrice } from "@pydantic/genai-prices";
import { describe, expect, it } from "vitest";
import { costOf } from "../../../../core/inference/catalog/cost.ts";
import type { ChatUsage } from "../../../../core/providers/types.ts";

/**
 * The cost of (provider, model, usage) rows of today's models for every native provider, as the gateway computes it
 * (core/inference/catalog/cost.ts, on the request path) and as @pydantic/genai-prices' own calcPrice computes it
 * (the package is the price list: nothing here is a price typed by hand). Usage covers plain, cached (reads, 5-minute
 * and 1-hour writes), reasoning, audio and long-context (over 200k input tokens) requests.
 */

type Row = [provider: string, model: string, genaiProvider: string, usage: ChatUsage];

const plain = (prompt: number, completion: number): ChatUsage => ({
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
});
const cached = (prompt: number, read: number, completion: number): ChatUsage => ({
  ...plain(prompt, completion),
  prompt_tokens_details: { cached_tokens: read },
});
const reasoning = (prompt: number, completion: number, thought: number): ChatUsage => ({
  ...plain(prompt, completion),
  completion_tokens_details: { reasoning_tokens: thought },
});
const anthropicCache = (prompt: number, read: number, write: number, write1h: number, completion: number) => ({
  ...plain(prompt, completion),
  prompt_tokens_details: { cached_tokens: read, cache_creation_tokens: write, cache_creation_1h_tokens: write1h },
});
const audio = (prompt: number, audioIn: number, completion: number, audioOut: number): ChatUsage => ({
  ...plain(prompt, completion),
  prompt_tokens_details: { audio_tokens: audioIn },
  completion_tokens_details: { audio_tokens: audioOut },
});

const ROWS: Row[] = [
  // OpenAI
  ["openai", "gpt-5.5", "openai", cached(12_000, 8_000, 900)],
  ["openai", "gpt-5.5", "openai", reasoning(300_000, 4_000, 3_000)],
  ["openai", "gpt-5.4-mini", "openai", cached(5_000, 1_024, 400)],
  ["openai", "gpt-5.1", "openai", reasoning(2_000, 6_000, 5_000)],
  ["openai", "gpt-5", "openai", cached(40_000, 30_000, 1_000)],
  ["openai", "gpt-5-mini", "openai", reasoning(1_500, 2_500, 2_000)],
  ["openai", "gpt-4.1", "openai", cached(9_000, 4_096, 700)],
  ["openai", "gpt-4o-mini-2024-07-18", "openai", plain(1_200, 300)],
  ["openai", "o3", "openai", reasoning(3_000, 9_000, 8_000)],
  ["openai", "o4-mini", "openai", reasoning(800, 4_000, 3_500)],
  ["openai", "gpt-4o-transcribe", "openai", audio(2_000, 1_900, 150, 0)],
  ["openai", "text-embedding-3-small", "openai", plain(8_000, 0)],
  // Azure OpenAI
  ["azure-openai", "gpt-5.1", "azure", cached(6_000, 2_048, 500)],
  ["azure-openai", "gpt-4o", "azure", plain(2_500, 600)],
  ["azure-openai", "gpt-4.1-mini", "azure", cached(20_000, 10_000, 1_000)],
  // Anthropic
  ["anthropic", "claude-sonnet-4-5", "anthropic", anthropicCache(30_000, 10_000, 6_000, 2_000, 1_200)],
  ["anthropic", "claude-sonnet-4-5-20250929", "anthropic", anthropicCache(250_000, 20_000, 5_000, 0, 3_000)],
  ["anthropic", "claude-haiku-4-5", "anthropic", anthropicCache(4_000, 0, 3_500, 3_500, 200)],
  ["anthropic", "claude-opus-4-6", "anthropic", reasoning(15_000, 8_000, 6_000)],
  ["anthropic", "claude-sonnet-5", "anthropic", anthropicCache(9_000, 5_000, 1_000, 0, 800)],
  ["anthropic", "claude-opus-4-1-20250805", "anthropic", plain(2_000, 1_000)],
  ["anthropic", "claude-opus-4-5", "anthropic", anthropicCache(50_000, 40_000, 0, 0, 2_000)],
  // Google (Gemini API)
  ["google", "gemini-2.5-flash-lite", "google", cached(10_000, 4_000, 500)],
  ["google", "gemini-3-pro-preview", "google", reasoning(120_000, 6_000, 4_000)],
  ["google", "gemini-3-pro-preview", "google", cached(260_000, 100_000, 2_000)],
  ["google", "gemini-2.5-pro", "google", reasoning(40_000, 3_000, 2_500)],
  ["google", "gemini-2.5-flash", "google", audio(5_000, 3_000, 400, 0)],
  ["google", "gemini-embedding-001", "google", plain(3_000, 0)],
  // Vertex AI (Gemini, and Claude by its `@date` id)
  ["vertex-ai", "gemini-2.5-pro", "google", cached(220_000, 50_000, 1_000)],
  ["vertex-ai", "claude-sonnet-4-5@20250929", "google", anthropicCache(12_000, 6_000, 2_000, 0, 900)],
  // Amazon Bedrock
  ["bedrock", "us.anthropic.claude-sonnet-4-5-20250929-v1:0", "aws", anthropicCache(20_000, 8_000, 4_000, 0, 1_000)],
  ["bedrock", "anthropic.claude-haiku-4-5-20251001-v1:0", "aws", plain(3_000, 500)],
  ["bedrock", "amazon.nova-pro-v1:0", "aws", cached(7_000, 2_000, 800)],
  ["bedrock", "meta.llama3-3-70b-instruct-v1:0", "aws", plain(1_000, 1_000)],
  // Mistral
  ["mistral-ai", "mistral-large-latest", "mistral", plain(6_000, 1_500)],
  ["mistral-ai", "mistral-small-latest", "mistral", plain(2_000, 700)],
  ["mistral-ai", "codestral-latest", "mistral", plain(12_000, 2_000)],
  ["mistral-ai", "mistral-embed", "mistral", plain(4_000, 0)],
  // Cohere
  ["cohere", "command-a-03-2025", "cohere", plain(5_000, 800)],
  ["cohere", "command-r-plus", "cohere", plain(3_000, 600)],
  ["cohere", "command-r7b-12-2024", "cohere", plain(9_000, 1_100)],
  ["cohere", "embed-v4.0", "cohere", plain(2_000, 0)],
  // OpenAI-compatible providers with prices of their own
  ["groq", "llama-3.3-70b-versatile", "groq", plain(4_000, 900)],
  ["deepseek", "deepseek-chat", "deepseek", cached(10_000, 6_000, 1_000)],
  ["deepseek", "deepseek-reasoner", "deepseek", reasoning(3_000, 5_000, 4_000)],
  ["x-ai", "grok-4", "x-ai", cached(8_000, 2_000, 1_500)],
  ["x-ai", "grok-3-mini", "x-ai", reasoning(1_000, 2_000, 1_500)],
];

/** The usage keys of genai-prices (its README: input_tokens counts every input token, cache reads and writes too). */
function genaiUsage(usage: ChatUsage): Record<string, number> {
  const prompt = usage.prompt_tokens_details ?? {};
  const completion = usage.completion_tokens_details ?? {};
  const keys: Record<string, number | undefined> = {
    input_tokens: usage.prompt_tokens,
    cache_read_tokens: prompt.cached_tokens,
    cache_write_tokens: prompt.cache_creation_tokens,
    cache_write_1h_tokens: prompt.cache_creation_1h_tokens,
    input_audio_tokens: prompt.audio_tokens,
    output_tokens: usage.completion_tokens,
    output_reasoning_tokens: completion.reasoning_tokens,
    output_audio_tokens: completion.audio_tokens,
  };
  return Object.fromEntries(Object.entries(keys).filter(([, value]) => value)) as Record<string, number>;
}

describe("cost accuracy against @pydantic/genai-prices' calcPrice", () => {
  it("has at least 40 rows across every native provider", () => {
    expect(ROWS.length).toBeGreaterThanOrEqual(40);
    const providers = new Set(ROWS.map(([provider]) => provider));
    for (const native of [
      "openai",
      "azure-openai",
      "anthropic",
      "google",
      "vertex-ai",
      "bedrock",
      "mistral-ai",
      "cohere",
    ])
      expect(providers).toContain(native);
  });

  it.each(ROWS)("%s %s", (provider, model, genaiProvider, usage) => {
    const expected = calcPrice(genaiUsage(usage), model, { providerId: genaiProvider });
    expect(expected, `genai-prices prices ${model}`).not.toBeNull();
    const cost = costOf(provider, model, usage);
    expect(cost.priced).toBe(true);
    expect(cost.source?.name).toBe("@pydantic/genai-prices");
    // Within rounding: a millionth of a cent, or a billionth of the price.
    const tolerance = Math.max(1e-8, expected!.total_price * 1e-9);
    expect(Math.abs(cost.total - expected!.total_price)).toBeLessThan(tolerance);
    expect(Math.abs(cost.input - expected!.input_price)).toBeLessThan(tolerance);
    expect(Math.abs(cost.output - expected!.output_price)).toBeLessThan(tolerance);
    const components = Object.values(cost.components ?? {}).reduce((sum, usd) => sum + usd, 0);
    expect(Math.abs(components - cost.total)).toBeLessThan(tolerance);
  });
});

import type { ChatUsage } from "../../providers/types.ts";

/**
 * A model's token prices in the form the request path evaluates: resolved once per process from the price source
 * (genai-price.ts, models-dev-price.ts), then priced per request with a few multiplications and no lookups.
 *
 * Usage keys are genai-prices' own (its units.yml): `input_tokens` is every input token, and the other input keys
 * are parts of it (cache reads and writes, audio, images); `cache_write_1h_tokens` is part of the cache writes;
 * `output_tokens` is every output token, reasoning, audio and image tokens parts of it. Each key priced on its own
 * has its own rate; a part without one is charged at the rate of what it is part of (audio tokens at the input
 * rate on a model without an audio price). Long-context prices are brackets chosen by the request's input tokens.
 */

export const TOKEN_USAGE_KEYS = [
  "input_tokens",
  "cache_read_tokens",
  "cache_write_tokens",
  "cache_write_1h_tokens",
  "input_audio_tokens",
  "input_image_tokens",
  "output_tokens",
  "output_reasoning_tokens",
  "output_audio_tokens",
  "output_image_tokens",
] as const;

export type TokenUsageKey = (typeof TOKEN_USAGE_KEYS)[number];
export type TokenUsage = Partial<Record<TokenUsageKey, number>>;

/** What each part is part of (the two roots have none). */
export const PARENT: Readonly<Record<TokenUsageKey, TokenUsageKey | undefined>> = {
  input_tokens: undefined,
  cache_read_tokens: "input_tokens",
  cache_write_tokens: "input_tokens",
  cache_write_1h_tokens: "cache_write_tokens",
  input_audio_tokens: "input_tokens",
  input_image_tokens: "input_tokens",
  output_tokens: undefined,
  output_reasoning_tokens: "output_tokens",
  output_audio_tokens: "output_tokens",
  output_image_tokens: "output_tokens",
};

/** Where a price came from: the package (name, version, publication date) or an admin's override. */
export interface PriceSource {
  name: string;
  version?: string;
  /** The day the source's data was published (yyyy-mm-dd). */
  date?: string;
}

export interface TokenPrice {
  source: PriceSource;
  /** The model as the source names it (`claude-sonnet-4-5` for `claude-sonnet-4-5-20250929`). */
  sourceModel?: string;
  /**
   * Input-token thresholds of the long-context tiers, ascending: bracket `i` applies when the request's input
   * tokens exceed `starts[i - 1]` (bracket 0 below the first).
   */
  starts: number[];
  /** Per bracket: USD per token of each key priced on its own. */
  brackets: Array<Partial<Record<TokenUsageKey, number>>>;
  /** A fee per request (USD), for the few models priced by the request. */
  perRequest: number;
  /** Where the models.dev or genai-prices data knows it: the context window (tokens). */
  contextWindow?: number;
}

/** USD of one priced request, with what each part cost. */
export interface TokenCost {
  total: number;
  input: number;
  output: number;
  /** USD per component: the usage key without `_tokens` (`input`, `cache_read`, `output_reasoning`...), `request`. */
  components: Record<string, number>;
}

const INPUT_KEYS: readonly TokenUsageKey[] = TOKEN_USAGE_KEYS.filter(
  (key) => key === "input_tokens" || key.startsWith("cache_") || key.startsWith("input_"),
);

/** The rate a key is charged at: its own, else that of what it is part of. */
function rateOf(rates: Partial<Record<TokenUsageKey, number>>, key: TokenUsageKey): number {
  for (let at: TokenUsageKey | undefined = key; at; at = PARENT[at]) {
    const rate = rates[at];
    if (rate !== undefined) return rate;
  }
  return 0;
}

/** The bracket of a request with `inputTokens` input tokens. */
export function bracketOf(price: TokenPrice, inputTokens: number): Partial<Record<TokenUsageKey, number>> {
  let index = 0;
  while (index < price.starts.length && inputTokens > price.starts[index]!) index++;
  return price.brackets[index]!;
}

/**
 * Prices usage: each key's own tokens (less its parts) at its rate. Parts larger than the whole (a provider's
 * odd report) are clamped, so a cost is never negative.
 */
export function priceTokens(price: TokenPrice, usage: TokenUsage): TokenCost {
  const rates = bracketOf(price, usage.input_tokens ?? 0);
  // Each key's tokens less those of its parts (its leaf). A part larger than its whole (an odd report) is
  // clamped to it, and a whole whose parts add up to more keeps none of its own.
  const totals: Partial<Record<TokenUsageKey, number>> = {};
  for (const key of TOKEN_USAGE_KEYS) {
    const value = usage[key];
    if (value === undefined || !(value > 0)) continue;
    const parent = PARENT[key];
    totals[key] = parent ? Math.min(value, totals[parent] ?? 0) : value;
  }
  const own: Partial<Record<TokenUsageKey, number>> = { ...totals };
  for (const key of TOKEN_USAGE_KEYS) {
    const parent = PARENT[key];
    const value = totals[key];
    if (parent && value) own[parent] = Math.max(0, (own[parent] ?? 0) - value);
  }
  const components: Record<string, number> = {};
  let input = 0;
  let output = 0;
  for (const key of TOKEN_USAGE_KEYS) {
    const tokens = own[key];
    if (!tokens) continue;
    const usd = tokens * rateOf(rates, key);
    components[key.slice(0, -"_tokens".length)] = usd;
    if (INPUT_KEYS.includes(key)) input += usd;
    else output += usd;
  }
  if (price.perRequest > 0) components.request = price.perRequest;
  return { total: input + output + price.perRequest, input, output, components };
}

/** A chat usage (OpenAI's shape, as every provider's answer is normalised) as token usage keys. */
export function tokenUsageOf(usage: ChatUsage): TokenUsage {
  const prompt = usage.prompt_tokens_details;
  const completion = usage.completion_tokens_details;
  return {
    input_tokens: usage.prompt_tokens,
    cache_read_tokens: prompt?.cached_tokens,
    cache_write_tokens: prompt?.cache_creation_tokens,
    cache_write_1h_tokens: prompt?.cache_creation_1h_tokens,
    input_audio_tokens: prompt?.audio_tokens,
    input_image_tokens: prompt?.image_tokens,
    output_tokens: usage.completion_tokens,
    output_reasoning_tokens: completion?.reasoning_tokens,
    output_audio_tokens: completion?.audio_tokens,
    output_image_tokens: completion?.image_tokens,
  };
}

/** A price of one bracket from flat per-million-token prices (models.dev's, an override's). */
export function flatTokenPrice(
  source: PriceSource,
  perMillion: Partial<Record<TokenUsageKey, number | undefined>>,
): TokenPrice {
  const rates: Partial<Record<TokenUsageKey, number>> = {};
  for (const [key, value] of Object.entries(perMillion))
    if (value !== undefined) rates[key as TokenUsageKey] = value / 1_000_000;
  return { source, starts: [], brackets: [rates], perRequest: 0 };
}

import { calcPrice, findProvider, type ModelInfo, type ModelPrice, type Provider } from "@pydantic/genai-prices";
import { GENAI_PRICES } from "./price-source.ts";
import { PARENT, TOKEN_USAGE_KEYS, type TokenPrice, type TokenUsage, type TokenUsageKey } from "./token-price.ts";

/**
 * Token prices from @pydantic/genai-prices (~830 KB of data: imported only through load.ts, on the first request
 * that prices usage). A model is found once per process (the package's matching scans every model of a
 * provider); each of its price variants is then turned into a TokenPrice by asking `calcPrice` itself what one
 * more token of each usage key costs, per long-context bracket. So the request path multiplies a few rates, and
 * what it computes is what calcPrice computes (test/unit/inference/catalog/cost-accuracy.test.ts pins both).
 */

/** Our provider id -> genai-prices provider ids (first wins). Providers not listed fall back to the model's maker. */
const GENAI_PROVIDERS: Readonly<Record<string, readonly string[]>> = {
  openai: ["openai"],
  "azure-openai": ["azure"],
  anthropic: ["anthropic"],
  google: ["google"],
  "vertex-ai": ["google"],
  bedrock: ["aws"],
  "mistral-ai": ["mistral"],
  cohere: ["cohere"],
  groq: ["groq"],
  "together-ai": ["together"],
  "fireworks-ai": ["fireworks"],
  deepseek: ["deepseek"],
  "x-ai": ["x-ai"],
  openrouter: ["openrouter"],
  cerebras: ["cerebras"],
  "perplexity-ai": ["perplexity"],
  moonshot: ["moonshotai"],
  "novita-ai": ["novita"],
  zhipu: ["zhipuai"],
  "z-ai": ["zai"],
  "workers-ai": ["cloudflare"],
  baseten: ["baseten"],
  voyage: ["voyageai"],
};

/** Providers whose model ids carry a `vendor/` prefix of their own (never stripped). */
const PREFIXED_IDS = new Set(["openrouter", "together-ai", "fireworks-ai", "novita-ai", "groq", "workers-ai"]);

interface Found {
  provider: Provider;
  model: ModelInfo;
  /** The id it was found by (what calcPrice matches against the model's rules). */
  id: string;
  /** Whether it is the model's maker's price, not the provider's own (a host genai-prices does not list). */
  maker: boolean;
}

const found = new Map<string, Found | null>();
/** Bounds the memory of lookups (model names are caller input). */
const MAX_REMEMBERED = 5_000;

/** The ids a provider's model may go by: as sent, without a `vendor/` or Bedrock region prefix, Vertex's `@date`. */
export function modelCandidates(provider: string, model: string): string[] {
  const candidates = [model];
  const add = (id: string) => {
    if (id && !candidates.includes(id)) candidates.push(id);
  };
  if (!PREFIXED_IDS.has(provider)) add(model.replace(/^[\w.-]+\//, ""));
  add(model.replace(/^(us|eu|apac|global|jp|au)\./, ""));
  add(model.replace(/@(\d{4})(\d{2})(\d{2})$/, "-$1$2$3").replace(/@.*$/, ""));
  return candidates;
}

function search(provider: string, model: string): Found | undefined {
  const ids = GENAI_PROVIDERS[provider];
  const candidates = modelCandidates(provider, model);
  for (const providerId of ids ?? []) {
    for (const id of candidates) {
      const result = safeCalc(id, { providerId });
      if (result) return { provider: result.provider, model: result.model, id, maker: false };
    }
  }
  // A host genai-prices does not list: the model's maker's price (matched by the model's name).
  if (!ids) {
    for (const id of candidates) {
      const maker = findProvider({ modelId: id.toLowerCase() });
      const result = maker && safeCalc(id, { providerId: maker.id });
      if (result) return { provider: result.provider, model: result.model, id, maker: true };
    }
  }
  return undefined;
}

function safeCalc(model: string, options: { providerId?: string; provider?: Provider; timestamp?: Date }) {
  try {
    return calcPrice({}, model, options);
  } catch {
    return null;
  }
}

function foundModel(provider: string, model: string): Found | undefined {
  const key = `${provider}\u0000${model}`;
  let hit = found.get(key);
  if (hit === undefined) {
    hit = search(provider, model) ?? null;
    if (found.size >= MAX_REMEMBERED) found.clear();
    found.set(key, hit);
  }
  return hit ?? undefined;
}

/** The model's prices in force at `at` (genai-prices' start-date and time-of-day variants). */
function pricesAt(model: ModelInfo, at: Date): ModelPrice {
  if (!Array.isArray(model.prices)) return model.prices;
  for (let i = model.prices.length - 1; i >= 0; i--) {
    const variant = model.prices[i]!;
    const constraint = variant.constraint;
    if (!constraint) return variant.prices;
    if (constraint.type === "start_date" || "start_date" in constraint) {
      if (at >= new Date((constraint as { start_date: string }).start_date)) return variant.prices;
    } else if (inTimeOfDay(constraint as { start_time: string; end_time: string }, at)) return variant.prices;
  }
  return model.prices[0]!.prices;
}

function inTimeOfDay(window: { start_time: string; end_time: string }, at: Date): boolean {
  const seconds = (at.getTime() / 1000) % 86_400;
  const start = secondsOfDay(window.start_time);
  const end = secondsOfDay(window.end_time);
  return end < start ? seconds >= start || seconds < end : seconds >= start && seconds < end;
}

/** `HH:MM:SS[.fff](Z|±HH:MM)` as UTC seconds of the day. */
function secondsOfDay(time: string): number {
  const match = /^(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|([+-])(\d{2}):(\d{2}))$/.exec(time);
  if (!match) return 0;
  const local = Number(match[1]) * 3600 + Number(match[2]) * 60 + Number(match[3]) + Number(match[4] ?? 0);
  const offset = match[5] === "Z" ? 0 : (match[6] === "+" ? 1 : -1) * (Number(match[7]) * 3600 + Number(match[8]) * 60);
  return (((local - offset) % 86_400) + 86_400) % 86_400;
}

const compiled = new WeakMap<ModelPrice, TokenPrice | null>();

/**
 * The TokenPrice of a provider's model at `at` (a request's time), or undefined when genai-prices has none. Found
 * once per process and model; compiled once per price variant.
 */
export function genaiTokenPrice(provider: string, model: string, at: Date): TokenPrice | undefined {
  const hit = foundModel(provider, model);
  if (!hit) return undefined;
  const prices = pricesAt(hit.model, at);
  let price = compiled.get(prices);
  if (price === undefined) {
    try {
      price = compile(hit, prices, at);
    } catch (error) {
      console.error(`prices: ${(error as Error).message}`);
      price = null;
    }
    compiled.set(prices, price);
  }
  return price ?? undefined;
}

/** The price keys with long-context tiers give the brackets; calcPrice gives each key's rate in each. */
function compile(hit: Found, prices: ModelPrice, at: Date): TokenPrice {
  const starts = new Set<number>();
  for (const value of Object.values(prices))
    if (value && typeof value === "object") for (const tier of value.tiers) starts.add(tier.start);
  const sorted = [...starts].sort((a, b) => a - b);
  // Only this model, so calcPrice matches nothing else (and is quick).
  const single: Provider = { ...hit.provider, models: [{ ...hit.model, prices }], fallback_model_providers: [] };
  const priceOf = (usage: TokenUsage) => {
    try {
      return calcPrice(usage, hit.id, { provider: single, timestamp: at })?.total_price ?? Number.NaN;
    } catch {
      return Number.NaN;
    }
  };
  const perRequest = priceOf({}) || 0;
  const brackets = [0, ...sorted].map((start, index) => {
    // A representative input size of the bracket: above its start (a tier applies to inputs over its start).
    const inputs = index === 0 ? (sorted[0] ?? 1_000_000) : start + 1;
    const rates: Partial<Record<TokenUsageKey, number>> = {};
    const inputOnly = priceOf({ input_tokens: inputs });
    rates.input_tokens = (inputOnly - perRequest) / inputs;
    if (!Number.isFinite(rates.input_tokens)) throw new Error(`genai-prices cannot price ${hit.id}`);
    for (const key of TOKEN_USAGE_KEYS) {
      if (key === "input_tokens") continue;
      const base: TokenUsage = { input_tokens: inputs };
      // As many tokens of the key (and of what it is part of) as of input: differences of like sizes round least.
      for (let parent = PARENT[key]; parent && parent !== "input_tokens"; parent = PARENT[parent])
        base[parent] = inputs;
      const difference = (priceOf({ ...base, [key]: inputs }) - priceOf(base)) / inputs;
      // The extra cost of one token of a part over its whole: zero when the part has no price of its own.
      const parentRate = key === "output_tokens" ? 0 : rateAbove(rates, PARENT[key]);
      const rate = key === "output_tokens" ? difference : parentRate + difference;
      // A key calcPrice refuses on its own (one the data prices only jointly) is charged as its whole.
      if (!Number.isFinite(difference)) continue;
      if (key === "output_tokens" || Math.abs(difference) > 1e-15) rates[key] = rate;
    }
    return rates;
  });
  return {
    source: GENAI_PRICES,
    sourceModel: hit.maker ? `${hit.provider.id}/${hit.model.id}` : hit.model.id,
    starts: sorted,
    brackets,
    perRequest,
    contextWindow: hit.model.context_window,
  };
}

function rateAbove(rates: Partial<Record<TokenUsageKey, number>>, key: TokenUsageKey | undefined): number {
  for (let at = key; at; at = PARENT[at]) if (rates[at] !== undefined) return rates[at]!;
  return 0;
}

/** A model as genai-prices lists it under one of our provider ids, with the prices in force now (per 1M tokens). */
export interface GenaiModel {
  provider: string;
  id: string;
  name?: string;
  contextWindow?: number;
  prices: ModelPrice;
}

/** Every model genai-prices lists for the providers we map to it (GET /v1/models). */
export function listGenaiModels(now = new Date()): GenaiModel[] {
  const out: GenaiModel[] = [];
  for (const [provider, ids] of Object.entries(GENAI_PROVIDERS)) {
    const source = findProvider({ providerId: ids[0]! });
    for (const model of source?.models ?? []) {
      if (model.deprecated) continue;
      out.push({
        provider,
        id: model.id,
        name: model.name,
        contextWindow: model.context_window,
        prices: pricesAt(model, now),
      });
    }
  }
  return out;
}

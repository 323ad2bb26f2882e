import { createCompatibleAdapter } from "./openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "./openai/table.ts";
import type { ProviderAdapter } from "./types.ts";

/** The OpenAI-shaped providers (one table, small): always loaded. */
const LOADED = new Map<string, ProviderAdapter>(
  COMPATIBLE_PROVIDERS.map(createCompatibleAdapter).map((adapter) => [adapter.id, adapter]),
);

/**
 * The provider families with their own transforms, loaded on first use: a cold start (a Lambda's init)
 * compiles only the families it calls, not every provider's transforms. One line per folder.
 */
const LOADERS: Record<string, () => Promise<ProviderAdapter>> = {
  // Azure OpenAI and Azure AI Foundry share a folder (their endpoints, images and OCR: 5 KB).
  "azure-openai": () => import("./azure/index.ts").then((module) => module.azureOpenAIAdapter),
  "azure-ai": () => import("./azure/index.ts").then((module) => module.azureAIAdapter),
  anthropic: () => import("./anthropic/index.ts").then((module) => module.anthropicAdapter),
  bedrock: () => import("./bedrock/index.ts").then((module) => module.bedrockAdapter),
  cohere: () => import("./cohere/index.ts").then((module) => module.cohereAdapter),
  deepgram: () => import("./deepgram/index.ts").then((module) => module.deepgramAdapter),
  elevenlabs: () => import("./elevenlabs/index.ts").then((module) => module.elevenLabsAdapter),
  google: () => import("./google/index.ts").then((module) => module.googleAdapter),
  "vertex-ai": () => import("./vertex/index.ts").then((module) => module.vertexAdapter),
  "stability-ai": () => import("./stability/index.ts").then((module) => module.stabilityAdapter),
};

const loading = new Map<string, Promise<ProviderAdapter>>();

/** Every provider id the gateway can call. */
export const PROVIDER_IDS: readonly string[] = [...LOADED.keys(), ...Object.keys(LOADERS)];

const KNOWN = new Set(PROVIDER_IDS);

/** The id of a provider the gateway knows (ids are case-insensitive), or undefined. */
export function providerIdOf(id: string): string | undefined {
  const lower = id.toLowerCase();
  return KNOWN.has(lower) ? lower : undefined;
}

/** A provider's adapter (its family loaded on first use), or undefined for an unknown id. */
export async function loadProvider(id: string): Promise<ProviderAdapter | undefined> {
  const lower = id.toLowerCase();
  const loaded = LOADED.get(lower);
  if (loaded) return loaded;
  const load = LOADERS[lower];
  if (!load) return undefined;
  let pending = loading.get(lower);
  if (!pending) {
    pending = load().then((adapter) => {
      LOADED.set(lower, adapter);
      return adapter;
    });
    // A failed import is tried again next time.
    pending.catch(() => loading.delete(lower));
    loading.set(lower, pending);
  }
  return pending;
}

/** Every adapter, all families loaded (the provider table of docs/providers.md, tests). */
export function loadAllProviders(): Promise<ProviderAdapter[]> {
  return Promise.all(PROVIDER_IDS.map(async (id) => (await loadProvider(id))!));
}

import { anthropicAdapter } from "./anthropic/index.ts";
import { azureAIAdapter, azureOpenAIAdapter } from "./azure/index.ts";
import { bedrockAdapter } from "./bedrock/index.ts";
import { cohereAdapter } from "./cohere/index.ts";
import { googleAdapter } from "./google/index.ts";
import { createCompatibleAdapter } from "./openai/compatible.ts";
import { COMPATIBLE_PROVIDERS } from "./openai/table.ts";
import type { ProviderAdapter } from "./types.ts";
import { vertexAdapter } from "./vertex/index.ts";

/** Every provider the gateway can call, by id. One import line per provider family folder. */
const ADAPTERS: ProviderAdapter[] = [
  ...COMPATIBLE_PROVIDERS.map(createCompatibleAdapter),
  azureOpenAIAdapter,
  azureAIAdapter,
  cohereAdapter,
  anthropicAdapter,
  googleAdapter,
  vertexAdapter,
  bedrockAdapter,
];

export const PROVIDERS: ReadonlyMap<string, ProviderAdapter> = new Map(
  ADAPTERS.map((adapter) => [adapter.id, adapter]),
);

export function findProvider(id: string): ProviderAdapter | undefined {
  return PROVIDERS.get(id.toLowerCase());
}

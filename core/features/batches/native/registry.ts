import type { NativeBatchApi } from "../types.ts";

/**
 * Providers with a batch API of their own, by provider id, loaded on first use. A provider absent here (or whose
 * adapter does not `supports` the target and endpoint) has its batches run by the gateway.
 */
const openAI = () => import("./openai.ts").then((module) => module.openAIBatches);

const LOADERS: Record<string, () => Promise<NativeBatchApi>> = {
  openai: openAI,
  groq: openAI,
  "azure-openai": openAI,
  anthropic: () => import("./anthropic.ts").then((module) => module.anthropicBatches),
  bedrock: () => import("./bedrock.ts").then((module) => module.bedrockBatches),
  "vertex-ai": () => import("./vertex.ts").then((module) => module.vertexBatches),
};

export async function nativeBatchApiFor(providerId: string): Promise<NativeBatchApi | undefined> {
  return LOADERS[providerId]?.();
}

import { badRequest } from "../../http/errors.ts";
import type { ProviderTarget } from "../../providers/types.ts";
import type { FineTuningProviderApi } from "./provider-api.ts";

/** Each provider's fine-tuning API (core/features/fine-tuning/providers/*), loaded on first use. */
const openAI = () => import("./providers/openai.ts").then((module) => module.openAIFineTuning);

const LOADERS: Record<string, () => Promise<FineTuningProviderApi>> = {
  openai: openAI,
  "azure-openai": openAI,
  "vertex-ai": () => import("./providers/vertex.ts").then((module) => module.vertexFineTuning),
  bedrock: () => import("./providers/bedrock.ts").then((module) => module.bedrockFineTuning),
};

export const FINE_TUNING_PROVIDERS: ReadonlySet<string> = new Set(Object.keys(LOADERS));

export function checkFineTuningProvider(target: ProviderTarget): void {
  if (FINE_TUNING_PROVIDERS.has(target.provider)) return;
  throw badRequest(
    `Fine-tuning through the gateway supports the providers ${[...FINE_TUNING_PROVIDERS].join(", ")}; '${target.provider}' is not supported.`,
    "x-gateway-provider",
    "unsupported_provider",
  );
}

/** The target's fine-tuning API (400 unsupported_provider for a provider without one). */
export async function fineTuningApiFor(target: ProviderTarget): Promise<FineTuningProviderApi> {
  checkFineTuningProvider(target);
  return LOADERS[target.provider]!();
}

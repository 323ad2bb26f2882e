import type { UnitPrice } from "./types.ts";

export const MODERATION_PRICES: readonly UnitPrice[] = [
  // https://platform.openai.com/docs/guides/moderation: the moderation endpoint is free (a row with no price).
  { providers: ["openai", "azure-openai"], model: /^(omni|text)-moderation-/ },
  // https://mistral.ai/pricing#api-pricing: Mistral Moderation $0.10 per 1M tokens. On Mistral, OpenAI's model names
  // (the route's default `text-moderation-latest`) call that model (core/providers/mistral/moderations.ts).
  { providers: ["mistral-ai"], model: /^(mistral|text|omni)-moderation-/, perMillionTokens: { input: 0.1 } },
];

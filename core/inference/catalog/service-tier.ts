/**
 * What a service tier the answer reports does to a request's token prices, where the provider documents one
 * factor for every model: OpenAI's Flex processing is billed at its Batch API rates (half); the Gemini API's Flex
 * tier is half its standard price and its Priority tier 1.8 times (the factors genai-prices' own data cites for
 * Gemini models). OpenAI's Priority processing is priced per model, in no maintained source: it is priced at
 * standard rates and the cost says so (`note`), so an admin can see it and save an override.
 */
const FACTORS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  openai: { flex: 0.5 },
  "azure-openai": { flex: 0.5 },
  google: { flex: 0.5, priority: 1.8 },
};

/** Tiers that mean the standard price (no factor, no note). */
const STANDARD = new Set(["default", "standard", "auto", "standard_only", "on_demand"]);

export function serviceTierFactor(provider: string, tier: string): { factor: number; note?: string } {
  const name = tier.toLowerCase();
  if (STANDARD.has(name)) return { factor: 1 };
  const factor = FACTORS[provider]?.[name];
  if (factor !== undefined) return { factor };
  return { factor: 1, note: `service_tier '${tier}' priced at standard rates (no known rate for this tier)` };
}

/**
 * What a provider's own batch API charges, as a fraction of its normal per-token prices: the documented 50%
 * discount of the batch APIs of OpenAI (Batch API), Azure OpenAI (global batch deployments), Anthropic (Message
 * Batches), Amazon Bedrock (batch inference) and Google (Gemini API batch mode, Vertex AI batch prediction).
 * Only lines run by the provider's batch API get it: lines the gateway runs itself (gateway mode) are normal calls
 * to the provider and cost normal prices.
 */
const BATCH_PRICE_FACTOR: Readonly<Record<string, number>> = {
  openai: 0.5,
  "azure-openai": 0.5,
  anthropic: 0.5,
  bedrock: 0.5,
  "vertex-ai": 0.5,
  google: 0.5,
};

/** The factor applied to catalog prices for a line of a native batch of `provider` (1 when none is known). */
export function batchPriceFactor(provider: string): number {
  return BATCH_PRICE_FACTOR[provider] ?? 1;
}

import type { UnitPrice } from "./types.ts";

export const RERANK_PRICES: readonly UnitPrice[] = [
  // https://cohere.com/pricing: Rerank 3.5 $2.00 per 1,000 searches.
  { providers: ["cohere"], model: /^rerank-(v3\.5|english-v3\.0|multilingual-v3\.0)$/, perSearch: 2 / 1000 },
  // https://aws.amazon.com/bedrock/pricing/ (rerank models): Amazon Rerank 1.0 $1.00 and Cohere Rerank 3.5 $2.00
  // per 1,000 queries (a query over up to 100 documents). The model is its ARN.
  { providers: ["bedrock"], model: /(^|[/:])amazon\.rerank-v1:0$/, perSearch: 1 / 1000 },
  { providers: ["bedrock"], model: /(^|[/:])cohere\.rerank-v3-5:0$/, perSearch: 2 / 1000 },
  // https://docs.voyageai.com/docs/pricing: rerank-2.5 and rerank-2 $0.05, the lite models $0.02 per 1M tokens.
  { providers: ["voyage"], model: /^rerank-(2\.5|2|1)$/, perMillionTokens: { input: 0.05 } },
  { providers: ["voyage"], model: /^rerank-(2\.5-lite|2-lite|lite-2|lite-1)$/, perMillionTokens: { input: 0.02 } },
];

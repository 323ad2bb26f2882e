import type { UnitPrice } from "./types.ts";

export const RERANK_PRICES: readonly UnitPrice[] = [
  // https://cohere.com/pricing: Rerank 3.5 $2.00 per 1,000 searches.
  { providers: ["cohere"], model: /^rerank-(v3\.5|english-v3\.0|multilingual-v3\.0)$/, perSearch: 2 / 1000 },
];

import type { UnitPrice } from "./types.ts";

export const OCR_PRICES: readonly UnitPrice[] = [
  // https://mistral.ai/pricing: Mistral OCR $1 per 1,000 pages.
  { providers: ["mistral-ai"], model: /^mistral-ocr-/, perPage: 1 / 1000 },
];

import type { UnitPrice } from "./types.ts";

export const IMAGE_PRICES: readonly UnitPrice[] = [
  // https://openai.com/api/pricing (DALL-E 3 standard / HD; DALL-E 2 by size).
  {
    providers: ["openai", "azure-openai"],
    model: /^dall-e-3$/,
    perImage: {
      "hd:1024x1024": 0.08,
      "hd:1024x1792": 0.12,
      "hd:1792x1024": 0.12,
      "1024x1792": 0.08,
      "1792x1024": 0.08,
      default: 0.04,
    },
  },
  {
    providers: ["openai", "azure-openai"],
    model: /^dall-e-2$/,
    perImage: { "256x256": 0.016, "512x512": 0.018, default: 0.02 },
  },
];

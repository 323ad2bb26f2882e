import type { UnitPrice } from "./types.ts";

/** Stability AI bills in credits of $0.01 (https://platform.stability.ai/pricing); inpainting costs 5 credits. */
const STABILITY_CREDIT = 0.01;
const STABILITY_INPAINT = 5 * STABILITY_CREDIT;
const stabilityCredits = (credits: number) => ({ inpaint: STABILITY_INPAINT, default: credits * STABILITY_CREDIT });

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
  // https://openai.com/api/pricing: gpt-image-1 $5 per million text input tokens and $40 per million image output
  // tokens; gpt-image-1-mini $2 and $8. Priced on the `usage` the answer reports (the catalog has no image models);
  // input tokens are all priced at the text rate (the usage we keep does not split out image input tokens).
  {
    providers: ["openai", "azure-openai"],
    model: /^gpt-image-1-mini(-[\d-]+)?$/,
    perMillionTokens: { input: 2, output: 8 },
  },
  {
    providers: ["openai", "azure-openai"],
    model: /^gpt-image-1(-[\d-]+)?$/,
    perMillionTokens: { input: 5, output: 40 },
  },

  // https://aws.amazon.com/bedrock/pricing: Titan Image Generator v1 and v2, by resolution class and quality
  // (priceKey from core/providers/bedrock/images.ts).
  {
    providers: ["bedrock"],
    model: /amazon\.titan-image-generator-v[12]/,
    perImage: { "premium:512x512": 0.01, "premium:1024x1024": 0.012, "512x512": 0.008, default: 0.01 },
  },
  // Nova Canvas: up to 1024x1024 $0.04 standard / $0.06 premium; up to 2048x2048 $0.06 / $0.08.
  {
    providers: ["bedrock"],
    model: /amazon\.nova-canvas-v1/,
    perImage: { "premium:2048x2048": 0.08, "2048x2048": 0.06, premium: 0.06, default: 0.04 },
  },
  // Stability models on Bedrock, per image.
  { providers: ["bedrock"], model: /stability\.sd3-5-large-v1/, perImage: 0.08 },
  { providers: ["bedrock"], model: /stability\.sd3-large-v1/, perImage: 0.08 },
  { providers: ["bedrock"], model: /stability\.stable-image-ultra-v1/, perImage: 0.14 },
  { providers: ["bedrock"], model: /stability\.stable-image-core-v1/, perImage: 0.04 },

  // https://cloud.google.com/vertex-ai/generative-ai/pricing: Imagen, per image.
  { providers: ["vertex-ai"], model: /^imagen-4\.0-ultra-generate-/, perImage: 0.06 },
  { providers: ["vertex-ai"], model: /^imagen-4\.0-fast-generate-/, perImage: 0.02 },
  { providers: ["vertex-ai"], model: /^imagen-4\.0-generate-/, perImage: 0.04 },
  { providers: ["vertex-ai"], model: /^imagen-3\.0-fast-generate-/, perImage: 0.02 },
  { providers: ["vertex-ai"], model: /^imagen-3\.0-generate-/, perImage: 0.04 },
  { providers: ["vertex-ai"], model: /^imagegeneration@00[56]$/, perImage: 0.02 },

  // Stability AI (credits converted to USD): Ultra 8, Core 3, SD 3.5 Large 6.5, Large Turbo 4, Medium 3.5,
  // Flash 2.5 credits an image. Edits are inpainting whatever the model (priceKey `inpaint`); no model is Core.
  { providers: ["stability-ai"], model: /^(stable-image-)?ultra$/, perImage: stabilityCredits(8) },
  { providers: ["stability-ai"], model: /^((stable-image-)?core)?$/, perImage: stabilityCredits(3) },
  { providers: ["stability-ai"], model: /^(stable-image-)?inpaint$/, perImage: STABILITY_INPAINT },
  { providers: ["stability-ai"], model: /^sd3\.5-large$/, perImage: stabilityCredits(6.5) },
  { providers: ["stability-ai"], model: /^sd3\.5-large-turbo$/, perImage: stabilityCredits(4) },
  { providers: ["stability-ai"], model: /^sd3\.5-medium$/, perImage: stabilityCredits(3.5) },
  { providers: ["stability-ai"], model: /^sd3\.5-flash$/, perImage: stabilityCredits(2.5) },
];

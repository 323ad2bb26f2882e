import { handleInference, handleMultipartInference } from "../../inference/gateway/inference.ts";
import {
  imageEditRequest,
  imageGenerationRequest,
  imageVariationRequest,
} from "../../inference/gateway/schemas/images.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  generateImages: (request, ctx) => handleInference("image_generations", request, ctx, imageGenerationRequest),
  editImages: (request, ctx) => handleMultipartInference("image_edits", request, ctx, imageEditRequest),
  imageVariations: (request, ctx) => handleMultipartInference("image_variations", request, ctx, imageVariationRequest),
};

import { handleInference, handleMultipartInference } from "../../inference/gateway/inference.ts";
import { speechRequest, transcriptionRequest, translationRequest } from "../../inference/gateway/schemas/audio.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  createSpeech: (request, ctx) => handleInference("speech", request, ctx, speechRequest),
  createTranscription: (request, ctx) => handleMultipartInference("transcriptions", request, ctx, transcriptionRequest),
  createTranslation: (request, ctx) => handleMultipartInference("translations", request, ctx, translationRequest),
};

import { handleInference } from "../../gateway/inference.ts";
import { ocrRequest } from "../../gateway/schemas/ocr.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  ocr: (request, ctx) => handleInference("ocr", request, ctx, ocrRequest),
};

import { runInference } from "../../inference/gateway/inference.ts";
import { withGatewayFile } from "../../inference/gateway/ocr-file.ts";
import { ocrRequest } from "../../inference/gateway/schemas/ocr.ts";
import type { HandlerMap } from "../../http/context.ts";
import { readJson, validate } from "../../http/json.ts";

export const handlers: HandlerMap = {
  async ocr(request, ctx) {
    const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
    const body = validate(ocrRequest, json) as Record<string, any>;
    const sent = await withGatewayFile(body, ctx);
    try {
      return await runInference("ocr", sent, request, ctx);
    } finally {
      // The log keeps the request as the client sent it (the file id), not the file's bytes as a data URL.
      if (sent !== body && ctx.outcome) ctx.outcome.requestBody = body;
    }
  },
};

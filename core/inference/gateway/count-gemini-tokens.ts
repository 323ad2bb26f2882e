import type { RequestContext } from "../../services.ts";
import { readJson, validate } from "../../http/json.ts";
import { noCount, routeTokenCount } from "./routed-token-count.ts";

/**
 * `POST /v1beta/models/{model}:countTokens` (Gemini's token counting) for any provider: routed like a
 * generateContent, answered by Google's or Vertex AI's own countTokens for their Gemini models (their answer as it
 * is), else counted by the gateway's tokenizer: `{totalTokens}`.
 */
export async function countGeminiTokens(request: Request, ctx: RequestContext, model: string): Promise<Response> {
  const gemini = await import("../formats/gemini/index.ts");
  const json = await readJson(request, ctx.services.settings.GATEWAY_MAX_JSON_BODY_BYTES);
  const body = { ...(validate(gemini.geminiCountTokensRequest, json) as Record<string, any>), model };
  return routeTokenCount(request, ctx, "gemini", body, {
    async nativeRequest(target, transform) {
      if (target.provider === "google") {
        const { googleCountTokensRequest } = await import("../../providers/google/index.ts");
        return googleCountTokensRequest(body, transform);
      }
      if (target.provider === "vertex-ai") {
        const { vertexCountTokensRequest } = await import("../../providers/vertex/index.ts");
        return vertexCountTokensRequest(body, transform);
      }
      return undefined;
    },
    nativeAnswer(answer) {
      if (typeof answer.totalTokens !== "number") throw noCount("totalTokens");
      return answer;
    },
    estimate: () => gemini.estimateGeminiTokens(body, model),
  });
}

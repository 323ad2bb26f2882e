import type { RequestContext } from "../../services.ts";
import { asJsonArrayStream, geminiCall, readGeminiClientKey, wantsSse } from "../formats/gemini/client.ts";
import { loadFormat } from "../formats/registry.ts";
import { countGeminiTokens } from "./count-gemini-tokens.ts";
import { handleInference } from "./inference.ts";
import { loadOnce } from "../../util/load-once.ts";

/** Gemini's request schema, loaded with the first Gemini call (a dynamic import costs the loader every time). */
const geminiFormat = loadOnce(() => import("../formats/gemini/index.ts"));

/**
 * `POST /{version}/models/{model}:{method}` (Google's Gemini API) on every provider: the model and method from the
 * path, the provider key as Google's clients send it, then the pipeline (generateContent, streamGenerateContent)
 * or the routed token count (countTokens). Served by the gemini family (`v1beta`, `v1alpha`) and the models family
 * (`v1`, whose prefix it owns).
 */
export async function geminiModelCall(request: Request, ctx: RequestContext): Promise<Response> {
  const { model, method } = geminiCall(ctx.path ?? new URL(request.url).pathname);
  readGeminiClientKey(request, ctx);
  const { geminiRequest } = await geminiFormat.get();
  await loadFormat("gemini");
  if (method === "countTokens") return countGeminiTokens(request, ctx, model);
  const stream = method === "streamGenerateContent";
  // The model and the streaming choice are in the path: the body carries them through the pipeline.
  const response = await handleInference("gemini", request, ctx, geminiRequest, (body) => ({ ...body, model, stream }));
  return stream && !wantsSse(request) ? asJsonArrayStream(response) : response;
}

import { countTokens } from "../../catalog/tokens.ts";
import { geminiInputTexts } from "./texts.ts";

/**
 * The gateway's own token count of a Gemini :countTokens body (on providers with no count endpoint): every text
 * of the system instruction and the turns, plus the function declarations as JSON. An estimate: the tokenizer is
 * the catalog's for the model, media count for nothing. Answered as Google does: `{totalTokens}`.
 */
export async function estimateGeminiTokens(body: Record<string, any>, model: string): Promise<{ totalTokens: number }> {
  const request = body.generateContentRequest ?? body;
  const texts = geminiInputTexts({ ...request, contents: request.contents ?? [] }).slots.map((slot) => slot.text);
  const tools = Array.isArray(request.tools) && request.tools.length ? JSON.stringify(request.tools) : "";
  const totalTokens = (await countTokens(model, texts.join("\n"))) + (tools ? await countTokens(model, tools) : 0);
  return { totalTokens };
}

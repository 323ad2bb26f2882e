import { toChatUsage } from "../../../providers/google/chat.ts";
import type { FormatEvent, InboundFormat } from "../types.ts";
import { createGeminiAssembler } from "./assembler.ts";
import { chatToGemini } from "./from-chat.ts";
import { createGeminiStreamConverter } from "./stream-from-chat.ts";
import { geminiInputTexts, geminiOutputTexts } from "./texts.ts";
import { geminiToChat } from "./to-chat.ts";

export { estimateGeminiTokens } from "./count-tokens.ts";
export { type GeminiRequest, geminiCountTokensRequest, geminiRequest } from "./schema.ts";

/**
 * Google's Gemini API as an inbound format (POST /v1beta/models/{model}:generateContent and
 * :streamGenerateContent, what the @google/genai SDK sends with its base URL at the gateway): native on Google
 * and on Vertex AI's Gemini models (their `gemini` routes), translated to and from chat completions for every
 * other provider. The body carries the model and `stream` from the path (core/routes/handlers/gemini.ts).
 *
 * Its stream is a sequence of GenerateContentResponse chunks, each written as `data: <json>` (no event names, no
 * terminal event: the chunk with a finishReason ends it); the chunks add up, so a whole answer is one chunk
 * (a cached answer replays as one) and may follow others.
 */
export const geminiFormat: InboundFormat = {
  route: "gemini",
  toChat: geminiToChat,
  fromChat: chatToGemini,
  streamFromChat: createGeminiStreamConverter,
  replay: (answer) => [answer],
  assembler: createGeminiAssembler,
  usageOf: (answer) => toChatUsage(answer?.usageMetadata),
  isComplete: (answer) => {
    if (answer?.error !== undefined || !Array.isArray(answer?.candidates) || answer.candidates.length === 0)
      return false;
    return answer.candidates.every(
      (candidate: FormatEvent) =>
        typeof candidate?.finishReason === "string" && candidate.finishReason !== "FINISH_REASON_UNSPECIFIED",
    );
  },
  inputTexts: geminiInputTexts,
  outputTexts: geminiOutputTexts,
  eventText: (event) => `data: ${JSON.stringify(event)}\n\n`,
  eventTail: (event) => {
    if (event?.error !== undefined) return "error";
    const candidates: FormatEvent[] = Array.isArray(event?.candidates) ? event.candidates : [];
    return candidates.some((candidate) => typeof candidate?.finishReason === "string") ? "end" : undefined;
  },
  eventsAddUp: true,
};

import { toChatUsage } from "../../../providers/google/chat.ts";
import type { ChatUsage } from "../../../providers/types.ts";
import type { EventAssembler, FormatEvent } from "../types.ts";

/**
 * Folds Gemini stream chunks (native, or translated from chat) into the GenerateContentResponse they spell, as
 * Google's SDKs merge them: each candidate's parts in order, a text piece joined to the text part before it when
 * both are of one kind (thought or not) and neither carries a thought signature (a signature stays on its own
 * part, where the model put it); the candidate's other fields (finishReason, safetyRatings...) and the response's
 * (usageMetadata, modelVersion, responseId, promptFeedback) as the latest chunk gave them. An error chunk is
 * kept as the answer's `error`: such an answer is not complete.
 */

type Json = Record<string, any>;

export function createGeminiAssembler(): EventAssembler {
  const candidates = new Map<number, Json>();
  const response: Json = {};

  const addParts = (target: Json[], parts: unknown) => {
    for (const part of Array.isArray(parts) ? (parts as Json[]) : []) {
      const previous = target.at(-1);
      if (joinable(previous) && joinable(part) && Boolean(previous!.thought) === Boolean(part.thought)) {
        previous!.text += part.text;
      } else target.push({ ...part });
    }
  };

  return {
    add(event: FormatEvent) {
      if (event.error !== undefined) {
        response.error = event.error;
        return;
      }
      for (const [position, candidate] of (Array.isArray(event.candidates) ? event.candidates : []).entries()) {
        const index = typeof candidate?.index === "number" ? candidate.index : position;
        const { content, ...fields } = candidate ?? {};
        let folded = candidates.get(index);
        if (!folded) {
          folded = { content: { role: content?.role ?? "model", parts: [] } };
          candidates.set(index, folded);
        }
        addParts(folded.content.parts, content?.parts);
        Object.assign(folded, fields);
      }
      for (const [key, value] of Object.entries(event)) if (key !== "candidates") response[key] = value;
    },
    result() {
      const answer: Json = { ...response };
      if (candidates.size || !response.promptFeedback) {
        answer.candidates = [...candidates.entries()].sort(([a], [b]) => a - b).map(([, candidate]) => candidate);
      }
      return answer;
    },
    usage(): ChatUsage | undefined {
      return toChatUsage(response.usageMetadata);
    },
    model() {
      return typeof response.modelVersion === "string" ? response.modelVersion : undefined;
    },
  };
}

/** A plain text part (no signature, no other field) that the next text piece of its kind may join. */
function joinable(part: Json | undefined): part is Json & { text: string } {
  if (!part || typeof part.text !== "string" || part.thoughtSignature !== undefined) return false;
  return Object.keys(part).every((key) => key === "text" || key === "thought");
}

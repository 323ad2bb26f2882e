import type { TransformContext } from "../../../providers/types.ts";

/**
 * OpenAI chat completion -> Gemini GenerateContentResponse (candidates, usageMetadata, modelVersion, responseId),
 * and the pieces the stream converter shares with it: the finish reason, the usage and the parts of a message.
 */

type Json = Record<string, any>;

/** finish_reason -> Gemini's finishReason (a tool call ends a turn with STOP, as Gemini's own answers do). */
export function finishReasonOf(reason: unknown): string {
  if (reason === "length") return "MAX_TOKENS";
  if (reason === "content_filter") return "SAFETY";
  return "STOP";
}

/**
 * Chat usage -> usageMetadata: prompt tokens as they are (cached ones also as cachedContentTokenCount), reasoning
 * tokens as thoughtsTokenCount and outside candidatesTokenCount, as Gemini counts them.
 */
export function usageMetadataOf(usage: Json | undefined): Json {
  const prompt = count(usage?.prompt_tokens);
  const completion = count(usage?.completion_tokens);
  const thoughts = count(usage?.completion_tokens_details?.reasoning_tokens);
  const metadata: Json = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - thoughts),
    totalTokenCount: count(usage?.total_tokens) || prompt + completion,
  };
  const cached = count(usage?.prompt_tokens_details?.cached_tokens);
  if (cached) metadata.cachedContentTokenCount = cached;
  if (thoughts) metadata.thoughtsTokenCount = thoughts;
  return metadata;
}

/** Reasoning text, as chat providers name it. */
export function reasoningOf(message: Json | undefined): string {
  const reasoning = message?.reasoning_content ?? message?.reasoning;
  return typeof reasoning === "string" ? reasoning : "";
}

/** A tool call -> a functionCall part (its arguments parsed; arguments that do not parse are kept as `value`). */
export function functionCallPart(call: Json): Json {
  const raw = call?.function?.arguments;
  let args: unknown = {};
  if (typeof raw === "string" && raw.trim()) {
    try {
      args = JSON.parse(raw);
    } catch {
      args = { value: raw };
    }
  }
  const functionCall: Json = { name: call?.function?.name ?? "", args };
  if (typeof call?.id === "string" && call.id) functionCall.id = call.id;
  return { functionCall };
}

function partsOf(message: Json | undefined): Json[] {
  const parts: Json[] = [];
  const reasoning = reasoningOf(message);
  if (reasoning) parts.push({ text: reasoning, thought: true });
  const text = typeof message?.content === "string" ? message.content : message?.refusal;
  if (typeof text === "string" && text) parts.push({ text });
  for (const call of Array.isArray(message?.tool_calls) ? message.tool_calls : []) parts.push(functionCallPart(call));
  return parts;
}

export function chatToGemini(completion: Json, _body: Json, ctx: TransformContext): Json {
  const choices: Json[] = Array.isArray(completion.choices) ? completion.choices : [];
  const answer: Json = {
    candidates: choices.map((choice, position) => ({
      content: { role: "model", parts: partsOf(choice.message) },
      finishReason: finishReasonOf(choice.finish_reason),
      index: typeof choice.index === "number" ? choice.index : position,
    })),
    usageMetadata: usageMetadataOf(completion.usage),
    modelVersion: typeof completion.model === "string" && completion.model ? completion.model : ctx.model,
  };
  if (typeof completion.id === "string") answer.responseId = completion.id;
  return answer;
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

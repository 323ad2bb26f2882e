import { vendorErrorBody } from "../../../http/error-shapes.ts";
import type { TransformContext } from "../../../providers/types.ts";
import type { ChatStreamConverter, FormatEvent } from "../types.ts";
import { finishReasonOf, functionCallPart, reasoningOf, usageMetadataOf } from "./from-chat.ts";

/**
 * Chat completion chunks -> Gemini stream chunks (each a GenerateContentResponse, as `streamGenerateContent`
 * sends them): text and thought deltas go out as they come, one chunk per chat chunk; a tool call goes out whole
 * as a functionCall part (Gemini never streams a call's arguments) with its candidate's last chunk, which also
 * carries the finishReason; the usage rides on the last chunk (held until chat's usage chunk or the stream's end).
 * A stream that ends without a finish_reason was cut: its last chunk is Google's error object.
 */

type Json = Record<string, any>;

interface Call {
  id?: string;
  name: string;
  arguments: string;
}

export function createGeminiStreamConverter(_body: Json, ctx: TransformContext): ChatStreamConverter {
  let model = ctx.model;
  let responseId: string | undefined;
  let usage: Json | undefined;
  let done = false;
  /** Choice index -> its tool calls (by chat's call index), filled as argument pieces arrive. */
  const calls = new Map<number, Map<number, Call>>();
  /** Choice index -> its finish_reason, once it came. */
  const finished = new Map<number, unknown>();

  const frame = (candidates: Json[], extra: Json = {}): FormatEvent => ({
    candidates,
    modelVersion: model,
    ...(responseId ? { responseId } : {}),
    ...extra,
  });

  const addCalls = (index: number, deltas: Json[]) => {
    const mine = calls.get(index) ?? new Map<number, Call>();
    calls.set(index, mine);
    deltas.forEach((delta, position) => {
      const key = typeof delta?.index === "number" ? delta.index : position;
      const call = mine.get(key) ?? { name: "", arguments: "" };
      if (typeof delta?.id === "string" && delta.id) call.id = delta.id;
      if (typeof delta?.function?.name === "string" && delta.function.name) call.name = delta.function.name;
      if (typeof delta?.function?.arguments === "string") call.arguments += delta.function.arguments;
      mine.set(key, call);
    });
  };

  /** The last chunk: every finished candidate with its calls and finishReason, and the usage. */
  const last = (): FormatEvent[] => {
    done = true;
    const candidates = [...finished].map(([index, reason]) => {
      const parts = [...(calls.get(index)?.values() ?? [])].map((call) =>
        functionCallPart({ id: call.id, function: { name: call.name, arguments: call.arguments } }),
      );
      return { content: { role: "model", parts }, finishReason: finishReasonOf(reason), index };
    });
    return [frame(candidates, { usageMetadata: usageMetadataOf(usage) })];
  };

  return {
    push(chunk) {
      if (done) return [];
      if (typeof chunk.model === "string" && chunk.model) model = chunk.model;
      if (responseId === undefined && typeof chunk.id === "string") responseId = chunk.id;
      if (chunk.usage && typeof chunk.usage === "object") usage = chunk.usage;
      const candidates: Json[] = [];
      for (const choice of Array.isArray(chunk.choices) ? chunk.choices : []) {
        const index = typeof choice?.index === "number" ? choice.index : 0;
        const delta: Json = choice?.delta ?? {};
        const parts: Json[] = [];
        const reasoning = reasoningOf(delta);
        if (reasoning) parts.push({ text: reasoning, thought: true });
        const text = typeof delta.content === "string" ? delta.content : delta.refusal;
        if (typeof text === "string" && text) parts.push({ text });
        if (Array.isArray(delta.tool_calls)) addCalls(index, delta.tool_calls);
        if (parts.length) candidates.push({ content: { role: "model", parts }, index });
        if (choice?.finish_reason) finished.set(index, choice.finish_reason);
      }
      const events = candidates.length ? [frame(candidates)] : [];
      // OpenAI's last chunk (`choices: []` with usage) after the finish: the answer is whole.
      if (finished.size && usage && !chunk.choices?.length) events.push(...last());
      return events;
    },
    end() {
      if (done) return [];
      if (finished.size) return last();
      done = true;
      const failure = {
        status: 502,
        type: "api_error",
        message: "The upstream stream ended before the answer was complete.",
      };
      return [vendorErrorBody("gemini", failure)];
    },
  };
}

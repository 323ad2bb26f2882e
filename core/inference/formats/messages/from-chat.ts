import { createHash } from "node:crypto";
import { parseToolInput } from "../../../providers/anthropic/messages.ts";
import type { TransformContext } from "../../../providers/types.ts";

/**
 * OpenAI chat completion -> Anthropic Message (https://docs.anthropic.com/en/api/messages), and the pieces the
 * stream converter shares with it: the message id, the stop reason and the usage.
 */

type Json = Record<string, any>;

export type StopReason = "end_turn" | "max_tokens" | "stop_sequence" | "tool_use" | "refusal";

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}

/** `msg_` + hex derived from the request id: stable for one request, so logs and retries agree. */
export function messageId(requestId: string): string {
  return `msg_${createHash("sha256").update(requestId).digest("hex").slice(0, 24)}`;
}

/**
 * finish_reason -> stop_reason. `stop` is `stop_sequence` when the provider names the sequence it matched
 * (vLLM's `stop_reason`, SGLang's `matched_stop`) and it is one the client asked for; otherwise `end_turn`.
 * Tool calls mean `tool_use` whatever the reason says (some providers finish them with `stop`).
 */
export function stopOf(
  finishReason: unknown,
  hasToolCalls: boolean,
  choice: Json | undefined,
  body: Json,
): { stop_reason: StopReason; stop_sequence: string | null } {
  if (finishReason === "length") return { stop_reason: "max_tokens", stop_sequence: null };
  if (finishReason === "content_filter") return { stop_reason: "refusal", stop_sequence: null };
  if (hasToolCalls || finishReason === "tool_calls" || finishReason === "function_call") {
    return { stop_reason: "tool_use", stop_sequence: null };
  }
  const matched = choice?.stop_reason ?? choice?.matched_stop;
  const sequences: unknown[] = Array.isArray(body.stop_sequences) ? body.stop_sequences : [];
  if (typeof matched === "string" && sequences.includes(matched)) {
    return { stop_reason: "stop_sequence", stop_sequence: matched };
  }
  return { stop_reason: "end_turn", stop_sequence: null };
}

/** Chat usage -> Anthropic usage: prompt tokens less the cached and cache-written ones are the input tokens. */
export function messagesUsage(usage: Json | undefined): MessagesUsage {
  const prompt = count(usage?.prompt_tokens);
  const cacheRead = count(usage?.prompt_tokens_details?.cached_tokens);
  const cacheCreation = count(usage?.prompt_tokens_details?.cache_creation_tokens);
  return {
    input_tokens: Math.max(0, prompt - cacheRead - cacheCreation),
    cache_creation_input_tokens: cacheCreation,
    cache_read_input_tokens: cacheRead,
    output_tokens: count(usage?.completion_tokens),
  };
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
}

/** A chat message's text: a string, or the text parts of an array. */
export function chatText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
}

/** Reasoning text as chat providers report it (`reasoning_content`, or `reasoning` on some). */
export function reasoningText(holder: Json | undefined): string {
  const value = holder?.reasoning_content ?? holder?.reasoning;
  return typeof value === "string" ? value : "";
}

export function chatToMessage(completion: Json, body: Json, ctx: TransformContext): Json {
  const choice: Json | undefined = Array.isArray(completion?.choices) ? completion.choices[0] : undefined;
  const message: Json = choice?.message ?? {};
  const content: Json[] = [];

  const reasoning = reasoningText(message);
  if (reasoning) content.push({ type: "thinking", thinking: reasoning, signature: "" });
  const text = chatText(message.content);
  const refusal = typeof message.refusal === "string" ? message.refusal : "";
  if (text || refusal) content.push({ type: "text", text: text || refusal });

  const toolCalls: Json[] = Array.isArray(message.tool_calls) ? message.tool_calls : [];
  for (const call of toolCalls) {
    content.push({
      type: "tool_use",
      id: call?.id ?? "",
      name: call?.function?.name ?? "",
      input: parseToolInput(call?.function?.arguments) as Json,
    });
  }

  const stop = refusal && !text ? { stop_reason: "refusal" as const, stop_sequence: null } : null;
  return {
    id: messageId(ctx.requestId),
    type: "message",
    role: "assistant",
    model: completion?.model || ctx.model || body.model,
    content,
    ...(stop ?? stopOf(choice?.finish_reason, toolCalls.length > 0, choice, body)),
    usage: messagesUsage(completion?.usage),
  };
}

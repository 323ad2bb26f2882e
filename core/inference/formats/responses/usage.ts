import type { ChatUsage } from "../../../providers/types.ts";

/**
 * Usage in the Responses shape (spec 2.2: all five fields always present) and back in the chat shape the
 * pipeline reads for cost and limits. Chat's prompt tokens include the cached ones, as Responses' input tokens do.
 */

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number; cache_write_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

const count = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : 0);

/** Chat usage -> Responses usage; null when the answer reported none. */
export function responsesUsageFromChat(usage: Partial<ChatUsage> | null | undefined): ResponsesUsage | null {
  if (!usage || typeof usage !== "object") return null;
  const input = count(usage.prompt_tokens);
  const output = count(usage.completion_tokens);
  return {
    input_tokens: input,
    input_tokens_details: {
      cached_tokens: count(usage.prompt_tokens_details?.cached_tokens),
      cache_write_tokens: count(usage.prompt_tokens_details?.cache_creation_tokens),
    },
    output_tokens: output,
    output_tokens_details: { reasoning_tokens: count(usage.completion_tokens_details?.reasoning_tokens) },
    total_tokens: typeof usage.total_tokens === "number" ? usage.total_tokens : input + output,
  };
}

/** Responses usage -> chat usage; undefined when there is none (or it is not an object). */
export function chatUsageFromResponses(usage: unknown): ChatUsage | undefined {
  if (!usage || typeof usage !== "object") return undefined;
  const found = usage as Record<string, any>;
  const prompt = count(found.input_tokens);
  const completion = count(found.output_tokens);
  const chat: ChatUsage = {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: typeof found.total_tokens === "number" ? found.total_tokens : prompt + completion,
  };
  const cached = found.input_tokens_details?.cached_tokens;
  const written = found.input_tokens_details?.cache_write_tokens;
  if (typeof cached === "number" || typeof written === "number") {
    chat.prompt_tokens_details = {
      ...(typeof cached === "number" ? { cached_tokens: cached } : {}),
      ...(typeof written === "number" && written > 0 ? { cache_creation_tokens: written } : {}),
    };
  }
  const reasoning = found.output_tokens_details?.reasoning_tokens;
  if (typeof reasoning === "number") chat.completion_tokens_details = { reasoning_tokens: reasoning };
  return chat;
}

/** The chat usage of a Responses answer (InboundFormat.usageOf). */
export function usageOf(answer: Record<string, any>): ChatUsage | undefined {
  return chatUsageFromResponses(answer?.usage);
}

import type { ChatUsage } from "../types.ts";

/** The identity every chunk of one streamed answer repeats. */
export interface ChunkHead {
  id: string;
  created: number;
  model: string;
}

/** An OpenAI `chat.completion.chunk` with one choice (index 0). */
export function chatChunk(head: ChunkHead, delta: Record<string, unknown>, finishReason: string | null = null): object {
  return {
    id: head.id,
    object: "chat.completion.chunk",
    created: head.created,
    model: head.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  };
}

/** The last chunk of a stream, as OpenAI sends it with `include_usage`: no choices, the usage. */
export function usageChunk(head: ChunkHead, usage: ChatUsage): object {
  return { id: head.id, object: "chat.completion.chunk", created: head.created, model: head.model, choices: [], usage };
}

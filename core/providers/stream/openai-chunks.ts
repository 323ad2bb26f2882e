import { type ChatUsage, UpstreamError } from "../types.ts";

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

/**
 * The failure an OpenAI-shaped stream reports inside itself: a chunk `{"error": {...}}` (no choices), as OpenAI
 * and the compatible servers send when the answer fails after it started. Undefined for any other chunk.
 */
export function errorChunkFailure(chunk: Record<string, any> | null | undefined): UpstreamError | undefined {
  if (!chunk?.error || Array.isArray(chunk.choices)) return undefined;
  const error: Record<string, any> = typeof chunk.error === "object" ? chunk.error : { message: String(chunk.error) };
  return new UpstreamError(502, typeof error.message === "string" ? error.message : "The provider's stream failed.", {
    type: typeof error.type === "string" ? error.type : "server_error",
    code: typeof error.code === "string" ? error.code : "upstream_stream_error",
  });
}

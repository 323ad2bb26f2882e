import type { ChatUsage } from "../../providers/types.ts";

/**
 * What a realtime session used, summed over its `response.done` events (OpenAI Realtime API reference, server
 * events, `response.done`: `response.usage` with `input_token_details` {text_tokens, audio_tokens,
 * cached_tokens, cached_tokens_details} and `output_token_details` {text_tokens, audio_tokens}; Azure OpenAI's
 * realtime API sends the same events).
 */
export interface RealtimeUsage {
  responses: number;
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  input: { text: number; audio: number; cachedText: number; cachedAudio: number };
  output: { text: number; audio: number };
}

/** Reads the provider's events of one session: its usage, and the model the session runs. */
export class RealtimeUsageMeter {
  readonly usage: RealtimeUsage = {
    responses: 0,
    inputTokens: 0,
    outputTokens: 0,
    totalTokens: 0,
    input: { text: 0, audio: 0, cachedText: 0, cachedAudio: 0 },
    output: { text: 0, audio: 0 },
  };
  /** `session.model` of `session.created` / `session.updated`, when the provider names it. */
  model?: string;

  /** One upstream message. Only text frames that can be the events read here are parsed (audio deltas are not). */
  observe(data: Uint8Array | string, binary: boolean): void {
    if (binary) return;
    const text = typeof data === "string" ? data : undefined;
    const bytes = typeof data === "string" ? undefined : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    const has = (marker: string) => (bytes ? bytes.includes(marker) : text!.includes(marker));
    if (!has('"response.done"') && (this.model !== undefined || !has('"session.'))) return;
    let event: unknown;
    try {
      event = JSON.parse(text ?? bytes!.toString("utf8"));
    } catch {
      return;
    }
    this.add(event);
  }

  add(event: unknown): void {
    if (!isObject(event)) return;
    if ((event.type === "session.created" || event.type === "session.updated") && isObject(event.session)) {
      if (typeof event.session.model === "string") this.model = event.session.model.slice(0, 256);
      return;
    }
    if (event.type !== "response.done" || !isObject(event.response)) return;
    const reported = event.response.usage;
    if (!isObject(reported)) return;
    const usage = this.usage;
    const input = count(reported.input_tokens);
    const output = count(reported.output_tokens);
    usage.responses += 1;
    usage.inputTokens += input;
    usage.outputTokens += output;
    usage.totalTokens += count(reported.total_tokens) || input + output;
    const inDetails = isObject(reported.input_token_details) ? reported.input_token_details : {};
    const outDetails = isObject(reported.output_token_details) ? reported.output_token_details : {};
    const cached = count(inDetails.cached_tokens);
    const cachedDetails = isObject(inDetails.cached_tokens_details) ? inDetails.cached_tokens_details : undefined;
    // Without the split, cached tokens are counted as text (the two cached prices are alike, pricing says).
    const cachedAudio = cachedDetails ? Math.min(cached, count(cachedDetails.audio_tokens)) : 0;
    usage.input.text += count(inDetails.text_tokens);
    usage.input.audio += count(inDetails.audio_tokens);
    usage.input.cachedText += cached - cachedAudio;
    usage.input.cachedAudio += cachedAudio;
    usage.output.text += count(outDetails.text_tokens);
    usage.output.audio += count(outDetails.audio_tokens);
  }
}

/** The session's usage in the chat shape the request log and usage limits read. */
export function chatUsageOf(usage: RealtimeUsage): ChatUsage {
  const cached = usage.input.cachedText + usage.input.cachedAudio;
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.totalTokens,
    ...(cached > 0 && { prompt_tokens_details: { cached_tokens: cached } }),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function count(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? Math.floor(value) : 0;
}

import type { ProviderBoundItem } from "../../../providers/types.ts";
import { countDrop, type DroppedHistory } from "./counts.ts";

type Json = Record<string, any>;

const NOTHING_KEPT: ReadonlySet<ProviderBoundItem> = new Set();

/**
 * Chat messages for a target whose chat adapter keeps only `keeps` of the provider-bound items (RouteAdapter
 * keepsHistory): an assistant turn's `content_blocks` (Anthropic's thinking, signatures included, as chat answers
 * from Claude hand them out) and its tool calls' `extra_content.google` (Gemini's thought signatures) are taken
 * out for the others, which would refuse or misread them. Runs on every chat request: one pass over the messages,
 * and a copy only of what changes.
 */
export function fitChatHistory(
  body: Json,
  keeps: ReadonlySet<ProviderBoundItem> = NOTHING_KEPT,
): { body: Json; dropped?: DroppedHistory } {
  const messages = body.messages;
  if (!Array.isArray(messages)) return { body };
  let copy: Json[] | undefined;
  let dropped: DroppedHistory | undefined;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index];
    if (message?.role !== "assistant") continue;
    let fitted = message;
    if (message.content_blocks !== undefined && !keeps.has("anthropic_thinking")) {
      dropped ??= {};
      for (const block of Array.isArray(message.content_blocks) ? message.content_blocks : []) {
        countDrop(dropped, block?.type === "redacted_thinking" ? "redacted_thinking" : "thinking_signature");
      }
      const { content_blocks: _blocks, ...rest } = message;
      fitted = rest;
    }
    if (Array.isArray(message.tool_calls) && !keeps.has("gemini_thought_signature")) {
      const signed = signedCalls(message.tool_calls);
      if (signed > 0) {
        dropped ??= {};
        countDrop(dropped, "thought_signature", signed);
        fitted = { ...fitted, tool_calls: message.tool_calls.map(withoutGoogleExtra) };
      }
    }
    if (fitted !== message) {
      copy ??= [...messages];
      copy[index] = fitted;
    }
  }
  return copy ? { body: { ...body, messages: copy }, dropped } : { body };
}

/** Tool calls carrying Gemini's extra content (a loop: most turns have none, and nothing is allocated for them). */
function signedCalls(calls: Json[]): number {
  let signed = 0;
  for (const call of calls) if (call?.extra_content?.google !== undefined) signed++;
  return signed;
}

function withoutGoogleExtra(call: Json): Json {
  if (call?.extra_content?.google === undefined) return call;
  const { google: _google, ...extra } = call.extra_content;
  const { extra_content: _extra, ...rest } = call;
  return Object.keys(extra).length > 0 ? { ...rest, extra_content: extra } : rest;
}

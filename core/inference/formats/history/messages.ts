import { countDrop, type DroppedHistory } from "./counts.ts";

type Json = Record<string, any>;

/**
 * What a Messages request loses on its way to a provider reached through chat (messages/to-chat.ts drops it: chat
 * has no room for it): Anthropic's thinking blocks with their signatures, redacted thinking, and `cache_control`
 * with a `ttl` (chat knows no cache breakpoints). A native target (Anthropic, Claude on Bedrock and Vertex AI)
 * gets the body untouched and loses nothing.
 */
export function messagesHistoryDrops(body: Json): DroppedHistory | undefined {
  const dropped: DroppedHistory = {};
  const ttl = (holder: Json | undefined) => {
    if (holder?.cache_control?.ttl !== undefined) countDrop(dropped, "cache_control_ttl");
  };
  for (const block of Array.isArray(body.system) ? body.system : []) ttl(block);
  for (const tool of Array.isArray(body.tools) ? body.tools : []) ttl(tool);
  for (const message of Array.isArray(body.messages) ? body.messages : []) {
    for (const block of Array.isArray(message?.content) ? message.content : []) {
      if (block?.type === "thinking") countDrop(dropped, "thinking_signature");
      else if (block?.type === "redacted_thinking") countDrop(dropped, "redacted_thinking");
      ttl(block);
      if (block?.type === "tool_result" && Array.isArray(block.content)) for (const inner of block.content) ttl(inner);
    }
  }
  return Object.keys(dropped).length > 0 ? dropped : undefined;
}

import { chatChunk, usageChunk } from "../stream/openai-chunks.ts";
import { eventJson } from "../stream/sse.ts";
import type { ChatUsage, FinishReason, StreamTransformer, TransformContext, UpstreamEvent } from "../types.ts";
import { anthropicUpstreamError } from "./errors.ts";
import { mapStopReason, toChatUsage } from "./messages.ts";

/**
 * Messages API SSE events -> OpenAI `chat.completion.chunk`s.
 *   message_start          -> first chunk, delta {role: "assistant", content: ""}
 *   text_delta             -> delta.content
 *   thinking_delta         -> delta.reasoning_content
 *   signature_delta, redacted_thinking -> delta.content_blocks (what a client needs to send thinking back)
 *   tool_use block start   -> delta.tool_calls[{index, id, type, function: {name, arguments: ""}}]
 *   input_json_delta       -> delta.tool_calls[{index, function: {arguments}}]
 *   message_delta          -> chunk with the mapped finish_reason (usage remembered)
 *   message_stop           -> usage chunk `{choices: [], usage}`
 *   error                  -> throws UpstreamError
 */
export function createAnthropicStreamTransformer(
  ctx: Pick<TransformContext, "now" | "model" | "requestId">,
): StreamTransformer {
  let id = ctx.requestId;
  let model = ctx.model;
  let usage: Record<string, any> = {};
  let finished = false;
  let usageSent = false;
  let nextToolIndex = 0;
  /** Anthropic content block index -> OpenAI tool call index. */
  const toolIndexByBlock = new Map<number, number>();

  const chunk = (delta: Record<string, unknown>, finishReason: FinishReason | null = null): object =>
    chatChunk({ id, created: ctx.now, model }, delta, finishReason);

  const finalUsageChunk = (): object => {
    usageSent = true;
    const chatUsage: ChatUsage = toChatUsage(usage);
    return usageChunk({ id, created: ctx.now, model }, chatUsage);
  };

  return {
    push(event: UpstreamEvent) {
      const data = eventJson("anthropic", event);
      if (data === undefined) return [];
      const type = data?.type ?? event.event;
      if (event.event === "error" || type === "error") throw anthropicUpstreamError(data);

      switch (type) {
        case "message_start": {
          const message = data.message ?? {};
          if (message.id) id = message.id;
          if (message.model) model = message.model;
          usage = { ...message.usage };
          return [chunk({ role: "assistant", content: "" })];
        }
        case "content_block_start": {
          const block = data.content_block ?? {};
          if (block.type === "text") return block.text ? [chunk({ content: block.text })] : [];
          if (block.type === "thinking") return block.thinking ? [chunk({ reasoning_content: block.thinking })] : [];
          if (block.type === "redacted_thinking") {
            return [chunk({ content_blocks: [{ index: data.index, type: "redacted_thinking", data: block.data }] })];
          }
          if (block.type === "tool_use") {
            const index = nextToolIndex++;
            toolIndexByBlock.set(data.index, index);
            return [
              chunk({
                tool_calls: [{ index, id: block.id, type: "function", function: { name: block.name, arguments: "" } }],
              }),
            ];
          }
          return [];
        }
        case "content_block_delta": {
          const delta = data.delta ?? {};
          switch (delta.type) {
            case "text_delta":
              return delta.text ? [chunk({ content: delta.text })] : [];
            case "thinking_delta":
              return delta.thinking ? [chunk({ reasoning_content: delta.thinking })] : [];
            case "signature_delta":
              return [chunk({ content_blocks: [{ index: data.index, type: "thinking", signature: delta.signature }] })];
            case "input_json_delta": {
              const index = toolIndexByBlock.get(data.index);
              if (index === undefined || !delta.partial_json) return [];
              return [chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
            }
            default:
              return [];
          }
        }
        case "message_delta": {
          // message_delta usage is cumulative and may repeat input counts: it overrides message_start's values.
          if (data.usage) {
            for (const [key, value] of Object.entries(data.usage)) if (value != null) usage[key] = value;
          }
          const reason = mapStopReason(data.delta?.stop_reason);
          if (!reason) return [];
          finished = true;
          return [chunk({}, reason)];
        }
        case "message_stop":
          return usageSent ? [] : [finalUsageChunk()];
        default:
          // ping, content_block_stop and event types added later.
          return [];
      }
    },
    end() {
      // A stream cut after message_delta still reports what it used.
      return finished && !usageSent ? [finalUsageChunk()] : [];
    },
  };
}

import { chatChunk, usageChunk } from "../stream/openai-chunks.ts";
import { eventJson } from "../stream/sse.ts";
import type { ChatUsage, FinishReason, StreamTransformer, TransformContext, UpstreamEvent } from "../types.ts";
import { UpstreamError } from "../types.ts";
import { cohereFinishError, mapCohereFinishReason, toChatUsage } from "./chat.ts";

/**
 * Cohere Chat v2 SSE events -> OpenAI `chat.completion.chunk`s.
 *   message-start      -> first chunk, delta {role: "assistant", content: ""} (the message id becomes the chunk id)
 *   content-delta      -> delta.content (text) or delta.reasoning_content (thinking)
 *   tool-plan-delta    -> delta.content (the plan Cohere writes before calling tools)
 *   tool-call-start    -> delta.tool_calls[{index, id, type, function: {name, arguments}}]
 *   tool-call-delta    -> delta.tool_calls[{index, function: {arguments}}]
 *   message-end        -> chunk with the mapped finish_reason, then the usage chunk `{choices: [], usage}`
 *   content-start/-end, tool-call-end, citation-* -> nothing
 * finish_reason ERROR/TIMEOUT and unreadable events throw UpstreamError.
 */
export function createCohereStreamTransformer(
  ctx: Pick<TransformContext, "now" | "model" | "requestId">,
): StreamTransformer {
  let id = ctx.requestId;
  let started = false;
  let finished = false;
  let nextToolIndex = 0;
  /** Cohere tool call index (event `index`) -> OpenAI tool call index. */
  const toolIndex = new Map<number, number>();

  const head = () => ({ id, created: ctx.now, model: ctx.model });
  const chunk = (delta: Record<string, unknown>, finishReason: FinishReason | null = null): object =>
    chatChunk(head(), delta, finishReason);
  const finalUsageChunk = (usage: ChatUsage): object => usageChunk(head(), usage);
  /** A client must see the assistant role first, whatever event Cohere opens with. */
  const withStart = (chunks: object[]): object[] => {
    if (started || chunks.length === 0) return chunks;
    started = true;
    return [chunk({ role: "assistant", content: "" }), ...chunks];
  };

  return {
    push(event: UpstreamEvent) {
      const data = eventJson("cohere", event);
      if (data === undefined) return [];
      const type: string | undefined = data?.type ?? event.event;
      const message = data?.delta?.message ?? {};
      switch (type) {
        case "message-start":
          if (data.id) id = data.id;
          if (started) return [];
          started = true;
          return [chunk({ role: "assistant", content: "" })];
        case "content-delta": {
          const content = message.content ?? {};
          if (typeof content.text === "string" && content.text) return withStart([chunk({ content: content.text })]);
          if (typeof content.thinking === "string" && content.thinking) {
            return withStart([chunk({ reasoning_content: content.thinking })]);
          }
          return [];
        }
        case "tool-plan-delta":
          return message.tool_plan ? withStart([chunk({ content: message.tool_plan })]) : [];
        case "tool-call-start": {
          const call = message.tool_calls ?? {};
          const index = nextToolIndex++;
          toolIndex.set(Number(data.index ?? index), index);
          return withStart([
            chunk({
              tool_calls: [
                {
                  index,
                  id: call.id,
                  type: "function",
                  function: { name: call.function?.name, arguments: call.function?.arguments ?? "" },
                },
              ],
            }),
          ]);
        }
        case "tool-call-delta": {
          const args = message.tool_calls?.function?.arguments;
          const index = toolIndex.get(Number(data.index)) ?? Math.max(nextToolIndex - 1, 0);
          return args ? withStart([chunk({ tool_calls: [{ index, function: { arguments: args } }] })]) : [];
        }
        case "message-end": {
          const delta = data.delta ?? {};
          const failure = cohereFinishError(delta.finish_reason, delta.error);
          if (failure) throw failure;
          finished = true;
          const reason = mapCohereFinishReason(delta.finish_reason) ?? (nextToolIndex > 0 ? "tool_calls" : "stop");
          return withStart([chunk({}, reason), finalUsageChunk(toChatUsage(delta.usage))]);
        }
        default:
          return [];
      }
    },
    end() {
      if (!finished) {
        throw new UpstreamError(502, "cohere stream ended before message-end", { type: "server_error" });
      }
      return [];
    },
  };
}

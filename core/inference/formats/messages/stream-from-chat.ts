import type { TransformContext, TypedEvent } from "../../../providers/types.ts";
import type { ChatStreamConverter } from "../types.ts";
import { messageId, messagesUsage, reasoningText, stopOf } from "./from-chat.ts";

/**
 * Chat completion chunks -> Anthropic's stream events, in Anthropic's order:
 *   message_start (content [], usage zero: chat streams report usage only at their end)
 *   per block: content_block_start, content_block_delta..., content_block_stop
 *     (reasoning -> thinking block, content -> text block, each tool call -> tool_use block with
 *      input_json_delta; a new kind of delta closes the open block and opens the next)
 *   message_delta (stop_reason, stop_sequence; usage with the final input and output tokens), message_stop
 * A stream that ends without a finish_reason was cut: open blocks are closed and an `error` event says so.
 * Nothing follows message_stop or an error.
 */

type Json = Record<string, any>;
type BlockKind = "thinking" | "text" | "tool_use";

export function createMessagesStreamConverter(body: Json, ctx: TransformContext): ChatStreamConverter {
  const id = messageId(ctx.requestId);
  let model: string = ctx.model || body.model;
  let started = false;
  let done = false;
  let open: { kind: BlockKind; index: number } | undefined;
  let nextIndex = 0;
  /** Chat tool call index -> content block index. */
  const toolBlocks = new Map<number, number>();
  let finish: { reason: unknown; choice: Json } | undefined;
  let usage: Json | undefined;
  let text = false;
  let refused = false;

  const start = (events: TypedEvent[], chunk: Json) => {
    if (started) return;
    started = true;
    if (typeof chunk.model === "string" && chunk.model) model = chunk.model;
    events.push({
      type: "message_start",
      message: {
        id,
        type: "message",
        role: "assistant",
        model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: messagesUsage(undefined),
      },
    });
  };

  const close = (events: TypedEvent[]) => {
    if (!open) return;
    events.push({ type: "content_block_stop", index: open.index });
    open = undefined;
  };

  const openBlock = (events: TypedEvent[], kind: BlockKind, block: Json): number => {
    close(events);
    const index = nextIndex++;
    open = { kind, index };
    events.push({ type: "content_block_start", index, content_block: block });
    return index;
  };

  /** The block a delta of this kind goes to: the open one when it is of that kind, else a new one. */
  const blockFor = (events: TypedEvent[], kind: "thinking" | "text"): number => {
    if (open?.kind === kind) return open.index;
    // Chat carries no signature: the thinking block's stays empty, as in the JSON answer (fromChat).
    const block = kind === "thinking" ? { type: "thinking", thinking: "", signature: "" } : { type: "text", text: "" };
    return openBlock(events, kind, block);
  };

  const textDelta = (events: TypedEvent[], piece: string) => {
    const index = blockFor(events, "text");
    events.push({ type: "content_block_delta", index, delta: { type: "text_delta", text: piece } });
  };

  const toolCall = (events: TypedEvent[], call: Json, position: number) => {
    const chatIndex = typeof call?.index === "number" ? call.index : position;
    let index = toolBlocks.get(chatIndex);
    if (index === undefined) {
      index = openBlock(events, "tool_use", {
        type: "tool_use",
        id: typeof call?.id === "string" && call.id ? call.id : `toolu_${id.slice(4)}_${chatIndex}`,
        name: call?.function?.name ?? "",
        input: {},
      });
      toolBlocks.set(chatIndex, index);
    }
    // Arguments of an earlier call after a later one started (rare interleaving) still go to their own block.
    const args = call?.function?.arguments;
    if (typeof args === "string" && args) {
      events.push({ type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: args } });
    }
  };

  const stop = (): TypedEvent[] => {
    done = true;
    const reason =
      refused && !text
        ? { stop_reason: "refusal", stop_sequence: null }
        : stopOf(finish?.reason, toolBlocks.size > 0, finish?.choice, body);
    return [{ type: "message_delta", delta: reason, usage: messagesUsage(usage) }, { type: "message_stop" }];
  };

  return {
    push(chunk) {
      if (done) return [];
      const events: TypedEvent[] = [];
      start(events, chunk);
      const choice: Json | undefined = Array.isArray(chunk.choices) ? chunk.choices[0] : undefined;
      if (choice && !finish) {
        const delta: Json = choice.delta ?? {};
        const reasoning = reasoningText(delta);
        if (reasoning) {
          const index = blockFor(events, "thinking");
          events.push({ type: "content_block_delta", index, delta: { type: "thinking_delta", thinking: reasoning } });
        }
        if (typeof delta.content === "string" && delta.content) {
          text = true;
          textDelta(events, delta.content);
        }
        if (typeof delta.refusal === "string" && delta.refusal) {
          refused = true;
          textDelta(events, delta.refusal);
        }
        const calls: Json[] = Array.isArray(delta.tool_calls) ? delta.tool_calls : [];
        calls.forEach((call, i) => {
          toolCall(events, call, i);
        });
        if (choice.finish_reason) {
          finish = { reason: choice.finish_reason, choice };
          close(events);
        }
      }
      if (chunk.usage && typeof chunk.usage === "object") usage = chunk.usage;
      // OpenAI's last chunk (`choices: []` with usage) after the finish: the answer is whole.
      if (finish && usage && !choice) events.push(...stop());
      return events;
    },
    end() {
      if (done) return [];
      if (finish) return stop();
      done = true;
      const events: TypedEvent[] = [];
      close(events);
      events.push({
        type: "error",
        error: { type: "api_error", message: "The upstream stream ended before the answer was complete." },
      });
      return events;
    },
  };
}

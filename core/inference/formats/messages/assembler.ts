import { toChatUsage } from "../../../providers/anthropic/messages.ts";
import type { ChatUsage, TypedEvent } from "../../../providers/types.ts";
import type { EventAssembler } from "../types.ts";

/**
 * Folds Anthropic stream events (from a native provider or translated from chat) into the Message they spell,
 * as Anthropic's SDKs accumulate them: message_start gives the frame, blocks grow by their deltas (tool input
 * as JSON text, parsed when the block stops), message_delta sets the stop reason and updates usage.
 */

type Json = Record<string, any>;

export function createMessageAssembler(): EventAssembler {
  let message: Json | undefined;
  const blocks: Json[] = [];
  /** Block index -> the input JSON text received so far (tool_use and server_tool_use blocks). */
  const partialJson = new Map<number, string>();

  const finishInput = (index: number) => {
    const input = parseInput(partialJson.get(index));
    partialJson.delete(index);
    if (input !== undefined && blocks[index]) blocks[index].input = input;
  };

  return {
    add(event: TypedEvent) {
      switch (event.type) {
        case "message_start": {
          const start = (event.message ?? {}) as Json;
          message = { ...start, content: [], usage: { ...start.usage } };
          break;
        }
        case "content_block_start": {
          const index = Number(event.index);
          const block = { ...(event.content_block as Json) };
          blocks[index] = block;
          if (block.type === "tool_use" || block.type === "server_tool_use") partialJson.set(index, "");
          break;
        }
        case "content_block_delta": {
          const index = Number(event.index);
          const block = blocks[index];
          const delta = (event.delta ?? {}) as Json;
          if (!block) break;
          if (delta.type === "text_delta") block.text = (block.text ?? "") + (delta.text ?? "");
          else if (delta.type === "thinking_delta") block.thinking = (block.thinking ?? "") + (delta.thinking ?? "");
          else if (delta.type === "signature_delta") block.signature = delta.signature;
          else if (delta.type === "citations_delta") block.citations = [...(block.citations ?? []), delta.citation];
          else if (delta.type === "input_json_delta") {
            partialJson.set(index, (partialJson.get(index) ?? "") + (delta.partial_json ?? ""));
          }
          break;
        }
        case "content_block_stop":
          finishInput(Number(event.index));
          break;
        case "message_delta": {
          message ??= { content: [], usage: {} };
          const delta = (event.delta ?? {}) as Json;
          for (const [key, value] of Object.entries(delta)) message[key] = value;
          // message_delta usage is cumulative: each value it gives replaces the one before.
          const usage = (event.usage ?? {}) as Json;
          for (const [key, value] of Object.entries(usage)) if (value != null) message.usage[key] = value;
          break;
        }
        default:
          // ping, message_stop, error and event types added later carry nothing to fold.
          break;
      }
    },
    result() {
      const content: Json[] = [];
      blocks.forEach((block, index) => {
        if (!block) return;
        const copy = { ...block };
        // A tool block still open (the stream is not over): its input as far as it parses.
        const input = parseInput(partialJson.get(index));
        if (input !== undefined) copy.input = input;
        content.push(copy);
      });
      const answer: Json = { ...message, content };
      if (message?.usage) answer.usage = { ...message.usage };
      return answer;
    },
    usage(): ChatUsage | undefined {
      const usage = message?.usage;
      return usage && Object.keys(usage).length ? toChatUsage(usage) : undefined;
    },
    model() {
      return typeof message?.model === "string" ? message.model : undefined;
    },
  };
}

/** Tool input JSON text -> its value; undefined when there is none or it does not parse (cut mid-argument). */
function parseInput(json: string | undefined): unknown {
  if (!json?.trim()) return undefined;
  try {
    return JSON.parse(json);
  } catch {
    return undefined;
  }
}

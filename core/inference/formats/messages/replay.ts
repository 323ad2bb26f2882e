import type { TypedEvent } from "../../../providers/types.ts";

/**
 * The stream events that spell a complete Message (a cached answer served to a streaming client), in the
 * order Anthropic sends them: message_start with input usage, each block started, filled by deltas and
 * stopped, message_delta with the stop reason and output tokens, message_stop.
 */

type Json = Record<string, any>;

export function replayMessage(answer: Json): TypedEvent[] {
  const { content, stop_reason, stop_sequence, usage, ...rest } = answer;
  const events: TypedEvent[] = [
    {
      type: "message_start",
      message: {
        ...rest,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage, output_tokens: 0 },
      },
    },
  ];
  const blocks: Json[] = Array.isArray(content) ? content : [];
  blocks.forEach((block, index) => {
    const { start, deltas } = blockEvents(block);
    events.push({ type: "content_block_start", index, content_block: start });
    for (const delta of deltas) events.push({ type: "content_block_delta", index, delta });
    events.push({ type: "content_block_stop", index });
  });
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: stop_reason ?? null, stop_sequence: stop_sequence ?? null },
      usage: { output_tokens: typeof usage?.output_tokens === "number" ? usage.output_tokens : 0 },
    },
    { type: "message_stop" },
  );
  return events;
}

/** A block's start (its content emptied) and the deltas that fill it; other kinds start whole. */
function blockEvents(block: Json): { start: Json; deltas: Json[] } {
  switch (block?.type) {
    case "text": {
      const { text, ...start } = block;
      return { start: { ...start, text: "" }, deltas: text ? [{ type: "text_delta", text }] : [] };
    }
    case "thinking": {
      const { thinking, signature, ...start } = block;
      const deltas: Json[] = thinking ? [{ type: "thinking_delta", thinking }] : [];
      if (signature) deltas.push({ type: "signature_delta", signature });
      return { start: { ...start, thinking: "" }, deltas };
    }
    case "tool_use":
    case "server_tool_use": {
      const { input, ...start } = block;
      const json = input && typeof input === "object" ? JSON.stringify(input) : "{}";
      return {
        start: { ...start, input: {} },
        deltas: json === "{}" ? [] : [{ type: "input_json_delta", partial_json: json }],
      };
    }
    default:
      return { start: block, deltas: [] };
  }
}

import { catalogModel } from "../../catalog/load.ts";
import { contentText, countChatPromptTokens, countTokens } from "../../catalog/tokens.ts";
import type { TransformContext } from "../../../providers/types.ts";
import { UpstreamError } from "../../../providers/types.ts";

/**
 * Responses `truncation` for translated providers (spec 7): the chat body built from the request must fit the
 * target model's context window (the catalog's `contextWindow`), with `max_completion_tokens` reserved for the
 * answer. `disabled` (the default) and over: 400 `context_length_exceeded`, as OpenAI answers. `auto`: the oldest
 * messages are dropped (system and developer messages stay; an assistant message with tool calls goes with the
 * tool results that answer it) until the rest fits; the last turn is never dropped. A model the catalog does not
 * know, or knows no window for, is sent unchanged.
 *
 * Each message is counted once (and only when a cheap upper bound says the body might not fit): dropping a
 * message subtracts its count instead of counting the prompt again.
 */

type Json = Record<string, any>;

/** countChatPromptTokens adds this once per prompt (the reply's priming) besides each message's framing. */
const PROMPT_PRIMING_TOKENS = 3;
const MESSAGE_FRAMING_TOKENS = 3;

export async function fitToContextWindow(chat: Json, body: Json, ctx: TransformContext): Promise<Json> {
  const window = (await catalogModel(ctx.target.provider, ctx.model))?.contextWindow;
  if (!window || !Array.isArray(chat.messages)) return chat;
  const messages: Json[] = chat.messages;
  const reserved = typeof chat.max_completion_tokens === "number" ? chat.max_completion_tokens : 0;
  const toolsText = Array.isArray(chat.tools) && chat.tools.length > 0 ? JSON.stringify(chat.tools) : "";
  // Every token is at least one byte of UTF-8: a prompt whose bytes fit needs no count.
  if (upperBound(messages, toolsText) + reserved <= window) return chat;

  const model = ctx.model;
  const counts: number[] = [];
  for (const message of messages) {
    counts.push((await countChatPromptTokens(model, [message])) - PROMPT_PRIMING_TOKENS);
  }
  const fixed = PROMPT_PRIMING_TOKENS + (toolsText ? await countTokens(model, toolsText) : 0);
  let total = fixed + counts.reduce((sum, count) => sum + count, 0);
  if (total + reserved <= window) return chat;

  if (body.truncation === "auto") {
    const dropped = new Set<number>();
    const units = droppableUnits(messages);
    // The last unit is the turn being answered: dropping it would answer another question.
    for (const unit of units.slice(0, -1)) {
      for (const index of unit) {
        dropped.add(index);
        total -= counts[index]!;
      }
      if (total + reserved <= window) {
        return { ...chat, messages: messages.filter((_, index) => !dropped.has(index)) };
      }
    }
  }
  throw new UpstreamError(
    400,
    `The input (about ${total} tokens${reserved ? `, plus ${reserved} reserved by max_output_tokens` : ""}) exceeds the context window of ${ctx.model} (${window} tokens). Shorten the input${body.truncation === "auto" ? "" : ', or set truncation to "auto" to drop the oldest items'}.`,
    { code: "context_length_exceeded", param: "input", type: "invalid_request_error" },
  );
}

/** The bytes countChatPromptTokens would count, plus its framing: never below the token count. */
function upperBound(messages: Json[], toolsText: string): number {
  let bytes = PROMPT_PRIMING_TOKENS + Buffer.byteLength(toolsText);
  for (const message of messages) {
    bytes += MESSAGE_FRAMING_TOKENS + Buffer.byteLength(`${message.role ?? ""}\n`) + 1;
    bytes += Buffer.byteLength(contentText(message.content));
    if (message.tool_calls) bytes += Buffer.byteLength(JSON.stringify(message.tool_calls));
  }
  return bytes;
}

/**
 * The messages that may be dropped, oldest first, as units dropped together: one message, or an assistant message
 * with tool calls and the tool messages after it (a tool result without its call is refused by providers).
 * System and developer messages are never dropped.
 */
function droppableUnits(messages: Json[]): number[][] {
  const units: number[][] = [];
  messages.forEach((message, index) => {
    if (message.role === "system" || message.role === "developer") return;
    const previous = units.at(-1);
    if (message.role === "tool" && previous && messages[previous[0]!]!.role === "assistant") {
      previous.push(index);
      return;
    }
    units.push([index]);
  });
  return units;
}

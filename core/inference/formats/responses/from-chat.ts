import type { TransformContext } from "../../../providers/types.ts";
import { fallbackCallId, outputItemId } from "./ids.ts";
import {
  buildResponse,
  functionCallItem,
  logprobsFromChat,
  messageItem,
  outcomeOfFinish,
  outputTextPart,
  reasoningItem,
  refusalPart,
} from "./response.ts";
import { responsesUsageFromChat } from "./usage.ts";

/**
 * A chat completion (OpenAI shape, as the chat adapters answer) -> the Response to `body`. Output items, in the
 * order a Responses model gives them: the reasoning (chat's `reasoning_content`, as a summary), the assistant
 * message (its text and any refusal), then one function_call item per tool call. An answer with none of these
 * has an empty message. stream.ts builds the same items from chunks (same ids, same order).
 */

type Json = Record<string, any>;

export function responseFromChat(completion: Json, body: Json, ctx: TransformContext): Json {
  const choice: Json = Array.isArray(completion.choices) ? (completion.choices[0] ?? {}) : {};
  const message: Json = choice.message ?? {};
  const { status, incompleteReason } = outcomeOfFinish(choice.finish_reason);
  const itemStatus = status === "incomplete" ? "incomplete" : "completed";
  const output: Json[] = [];

  const reasoning = reasoningTextOf(message);
  if (reasoning) output.push(reasoningItem(outputItemId(ctx.requestId, "rs", 0), reasoning));

  const text = contentTextOf(message.content);
  const refusal = typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  const toolCalls: Json[] = Array.isArray(message.tool_calls) ? message.tool_calls.filter(Boolean) : [];
  if (text !== "" || refusal !== undefined) {
    const content = text !== "" ? [outputTextPart(text, logprobsFromChat(choice.logprobs?.content))] : [];
    if (refusal !== undefined) content.push(refusalPart(refusal));
    // Tool calls follow the text: the text was complete when they began, whatever cut the answer afterwards.
    output.push(
      messageItem(outputItemId(ctx.requestId, "msg", 0), content, toolCalls.length ? "completed" : itemStatus),
    );
  }
  toolCalls.forEach((call, ordinal) => {
    const callItem = {
      callId: typeof call.id === "string" && call.id !== "" ? call.id : fallbackCallId(ctx.requestId, ordinal),
      name: call.function?.name ?? "",
      arguments: call.function?.arguments ?? "",
    };
    output.push(functionCallItem(outputItemId(ctx.requestId, "fc", ordinal), callItem, itemStatus));
  });
  if (output.length === 0) {
    // An empty answer is an empty text, in a message as OpenAI's are.
    output.push(messageItem(outputItemId(ctx.requestId, "msg", 0), [outputTextPart("")], itemStatus));
  }

  return buildResponse(body, ctx, {
    status,
    incompleteReason,
    output,
    usage: responsesUsageFromChat(completion.usage),
    model: typeof completion.model === "string" && completion.model ? completion.model : ctx.model,
    serviceTier: typeof completion.service_tier === "string" ? completion.service_tier : undefined,
  });
}

/** Chat's reasoning text: `reasoning_content` (the gateway's adapters), or `reasoning` (some providers). */
export function reasoningTextOf(message: Json): string {
  if (typeof message.reasoning_content === "string") return message.reasoning_content;
  if (typeof message.reasoning === "string") return message.reasoning;
  return "";
}

/** A chat message content as text: a string, or the text of its text parts. */
export function contentTextOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part: Json) => (typeof part?.text === "string" ? part.text : "")).join("");
}

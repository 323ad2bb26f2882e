/**
 * What a broken stream had said, read from the answer its pipeline folded (a chat completion, a Response, a
 * Message): the text of its one assistant turn so far, or why it cannot be continued. Only text is continued: a
 * tool call half-streamed (or any tool call: the turn then ends with calls, not text), several choices, or a
 * refusal end the stream with the error, as without continuation.
 */

type Json = Record<string, any>;

export type ContinuableRoute = "chat" | "responses" | "messages";

export type PartialAnswer = { text: string } | { refused: string };

export function partialOf(route: ContinuableRoute, answer: Json): PartialAnswer {
  if (route === "responses") return responsesPartial(answer);
  if (route === "messages") return messagesPartial(answer);
  return chatPartial(answer);
}

function chatPartial(answer: Json): PartialAnswer {
  const choices: Json[] = Array.isArray(answer.choices) ? answer.choices : [];
  if (choices.length > 1) return { refused: "the answer has several choices" };
  const message: Json = choices[0]?.message ?? {};
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0)
    return { refused: "a tool call was being streamed" };
  if (typeof message.refusal === "string" && message.refusal) return { refused: "the answer is a refusal" };
  return { text: typeof message.content === "string" ? message.content : "" };
}

function responsesPartial(answer: Json): PartialAnswer {
  const items: Json[] = Array.isArray(answer.output) ? answer.output : [];
  let text = "";
  for (const item of items) {
    if (item?.type === "reasoning") continue;
    if (item?.type !== "message") return { refused: `a ${String(item?.type)} item was being streamed` };
    for (const part of Array.isArray(item.content) ? item.content : []) {
      if (part?.type === "refusal") return { refused: "the answer is a refusal" };
      if (part?.type === "output_text" && typeof part.text === "string") text += part.text;
    }
  }
  return { text };
}

function messagesPartial(answer: Json): PartialAnswer {
  const blocks: Json[] = Array.isArray(answer.content) ? answer.content : [];
  let text = "";
  for (const block of blocks) {
    if (block?.type === "thinking" || block?.type === "redacted_thinking") continue;
    if (block?.type !== "text") return { refused: `a ${String(block?.type)} block was being streamed` };
    text += typeof block.text === "string" ? block.text : "";
  }
  return { text };
}

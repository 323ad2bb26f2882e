/**
 * A cached OpenAI answer replayed as a stream: the chunks OpenAI would send for it (`chat.completion.chunk`,
 * the role delta first, the content, tool calls, the finish reason; `text_completion` chunks for completions),
 * a usage chunk only when the client asked for it (`stream_options.include_usage`), then `data: [DONE]`.
 */

/** Characters of text per replayed content chunk: a long answer arrives in pieces, as a live one does. */
const PIECE_CHARS = 1024;

/** The SSE text of a cached answer (one string: it is all known, and one write sends it). */
export function replayAsSse(answer: Record<string, any>, includeUsage: boolean): string {
  const chat = answer.object !== "text_completion";
  const head = {
    id: answer.id,
    object: chat ? "chat.completion.chunk" : "text_completion",
    created: answer.created,
    model: answer.model,
    ...(answer.system_fingerprint ? { system_fingerprint: answer.system_fingerprint } : {}),
  };
  const events: string[] = [];
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    events.push(
      `data: ${JSON.stringify({ ...head, choices, ...extra, ...(includeUsage ? { usage: null } : {}) })}\n\n`,
    );
  const choices: Array<Record<string, any>> = Array.isArray(answer.choices) ? answer.choices : [];
  for (const choice of choices) {
    const index = choice.index ?? 0;
    if (chat) {
      const message = choice.message ?? {};
      send([{ index, delta: { role: message.role ?? "assistant", content: "" }, logprobs: null, finish_reason: null }]);
      if (typeof message.reasoning_content === "string" && message.reasoning_content) {
        for (const piece of pieces(message.reasoning_content))
          send([{ index, delta: { reasoning_content: piece }, logprobs: null, finish_reason: null }]);
      }
      if (typeof message.content === "string") {
        for (const piece of pieces(message.content))
          send([{ index, delta: { content: piece }, logprobs: null, finish_reason: null }]);
      }
      if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
        const toolCalls = message.tool_calls.map((call: Record<string, any>, position: number) => ({
          index: position,
          id: call.id,
          type: call.type ?? "function",
          function: { name: call.function?.name ?? "", arguments: call.function?.arguments ?? "" },
        }));
        send([{ index, delta: { tool_calls: toolCalls }, logprobs: null, finish_reason: null }]);
      }
      send([{ index, delta: {}, logprobs: null, finish_reason: choice.finish_reason ?? "stop" }]);
    } else {
      for (const piece of pieces(typeof choice.text === "string" ? choice.text : ""))
        send([{ index, text: piece, logprobs: null, finish_reason: null }]);
      send([{ index, text: "", logprobs: null, finish_reason: choice.finish_reason ?? "stop" }]);
    }
  }
  if (includeUsage && answer.usage) {
    events.push(`data: ${JSON.stringify({ ...head, choices: [], usage: answer.usage })}\n\n`);
  }
  events.push("data: [DONE]\n\n");
  return events.join("");
}

function pieces(text: string): string[] {
  if (text.length <= PIECE_CHARS) return text ? [text] : [];
  const out: string[] = [];
  for (let at = 0; at < text.length; at += PIECE_CHARS) out.push(text.slice(at, at + PIECE_CHARS));
  return out;
}

/**
 * Whether an answer assembled from a stream is complete: every choice ended with a finish reason. A stream
 * cut short (by the provider, or by a client that went away) leaves a choice without one and is never cached.
 */
export function isCompleteAnswer(answer: Record<string, any>): boolean {
  const choices = answer.choices;
  if (!Array.isArray(choices) || choices.length === 0) return false;
  return choices.every((choice) => typeof choice?.finish_reason === "string" && choice.finish_reason !== "");
}

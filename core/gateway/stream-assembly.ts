/**
 * Folds the OpenAI chunks of a streamed answer into the answer they spell (one object like a non-streamed
 * response), for the request log: a fraction of the size of the raw chunks and readable as one message.
 */
interface AssembledChoice {
  index: number;
  content: string;
  reasoning: string;
  text: string;
  role?: string;
  tool_calls: Array<{ id?: string; type?: string; function: { name: string; arguments: string } }>;
  finish_reason: string | null;
}

export function assembleStream(chunks: Array<object | string>): Record<string, unknown> {
  let head: { id?: string; object?: string; created?: number; model?: string; system_fingerprint?: string } = {};
  let usage: unknown;
  const choices = new Map<number, AssembledChoice>();
  for (const chunk of chunks) {
    let parsed: any;
    try {
      parsed = typeof chunk === "string" ? ((head.id ? contentDelta(chunk) : undefined) ?? JSON.parse(chunk)) : chunk;
    } catch {
      continue;
    }
    if (!head.id && parsed.id) head = parsed;
    if (parsed.usage) usage = parsed.usage;
    for (const choice of parsed.choices ?? []) {
      const index = choice.index ?? 0;
      let entry = choices.get(index);
      if (!entry) {
        entry = { index, content: "", reasoning: "", text: "", tool_calls: [], finish_reason: null };
        choices.set(index, entry);
      }
      const delta = choice.delta ?? {};
      if (delta.role) entry.role = delta.role;
      if (typeof delta.content === "string") entry.content += delta.content;
      if (typeof delta.reasoning_content === "string") entry.reasoning += delta.reasoning_content;
      if (typeof choice.text === "string") entry.text += choice.text;
      for (const call of delta.tool_calls ?? []) {
        const position = call.index ?? 0;
        entry.tool_calls[position] ??= { function: { name: "", arguments: "" } };
        const slot = entry.tool_calls[position];
        if (call.id) slot.id = call.id;
        if (call.type) slot.type = call.type;
        if (call.function?.name) slot.function.name += call.function.name;
        if (call.function?.arguments) slot.function.arguments += call.function.arguments;
      }
      if (choice.finish_reason) entry.finish_reason = choice.finish_reason;
    }
  }
  const textCompletion = head.object === "text_completion";
  return {
    id: head.id,
    object: textCompletion ? "text_completion" : "chat.completion",
    created: head.created,
    model: head.model,
    system_fingerprint: head.system_fingerprint,
    choices: [...choices.values()].map((choice) =>
      textCompletion
        ? { index: choice.index, text: choice.text, finish_reason: choice.finish_reason }
        : {
            index: choice.index,
            message: {
              role: choice.role ?? "assistant",
              content: choice.content || null,
              ...(choice.reasoning ? { reasoning_content: choice.reasoning } : {}),
              ...(choice.tool_calls.length ? { tool_calls: choice.tool_calls.filter(Boolean) } : {}),
            },
            finish_reason: choice.finish_reason,
          },
    ),
    usage,
    streamed_chunks: chunks.length,
  };
}

/**
 * The tail of an OpenAI chunk that only adds text to one choice, as almost every chunk of a stream does:
 * `"choices":[{"index":0,"delta":{"content":"..."},"logprobs":null,"finish_reason":null}]}`. Anchored at the
 * end, so nothing else can follow it in the chunk.
 */
const CONTENT_ONLY_TAIL =
  /"choices":\[\{"index":(\d+),"delta":\{"content":("(?:[^"\\]|\\.)*")\},"logprobs":null,"finish_reason":null\}\]\}$/y;

/**
 * A content-only chunk after the first, reduced to what assembling reads, from its text: parsing every chunk
 * whole was the largest single cost of logging a streamed answer (about 2 µs per chunk). Anything else (other
 * fields after `choices`, tool calls, a finish reason, usage) returns undefined and the chunk is parsed whole.
 * The envelope before `choices` (id, model...) is the first chunk's, which is always parsed whole.
 */
function contentDelta(chunk: string): { choices: Array<{ index: number; delta: { content: string } }> } | undefined {
  const start = chunk.lastIndexOf('"choices":');
  if (start === -1) return undefined;
  CONTENT_ONLY_TAIL.lastIndex = start;
  const match = CONTENT_ONLY_TAIL.exec(chunk);
  if (!match) return undefined;
  return { choices: [{ index: Number(match[1]), delta: { content: JSON.parse(match[2]!) } }] };
}

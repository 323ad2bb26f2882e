interface AssembledChoice {
  index: number;
  content: string;
  reasoning: string;
  text: string;
  role?: string;
  tool_calls: Array<{ id?: string; type?: string; function: { name: string; arguments: string } }>;
  finish_reason: string | null;
}

interface ChunkHead {
  id?: string;
  object?: string;
  created?: number;
  model?: string;
  system_fingerprint?: string;
}

/**
 * Folds the OpenAI chunks of a streamed answer, as they pass, into the answer they spell (one object like a
 * non-streamed response), for the request log: a fraction of the size of the raw chunks and readable as one
 * message. Folding each chunk as it is sent means the chunks need not be kept until the stream ends, and the
 * pipeline learns from `add` what it needs (usage, model) without parsing a chunk a second time.
 */
export class StreamAssembler {
  #head: ChunkHead = {};
  #usage: unknown;
  #count = 0;
  readonly #choices = new Map<number, AssembledChoice>();

  /**
   * Folds one chunk (its JSON text, or an object). Returns the chunk as an object when it was parsed whole (or
   * given as one); undefined for a content-only chunk read from its text (it carries nothing else) and for text
   * that is not JSON.
   */
  add(chunk: object | string): Record<string, any> | undefined {
    this.#count++;
    let parsed: any;
    if (typeof chunk === "string") {
      try {
        const delta = this.#head.id ? contentDelta(chunk) : null;
        if (delta) {
          const quoted = delta[2]!;
          // Without escapes the JSON string is its text between the quotes (most pieces of text are).
          this.#choiceAt(Number(delta[1])).content += quoted.includes("\\") ? JSON.parse(quoted) : quoted.slice(1, -1);
          return undefined;
        }
        parsed = JSON.parse(chunk);
      } catch {
        return undefined;
      }
      if (parsed === null || typeof parsed !== "object") return undefined;
    } else {
      parsed = chunk;
    }
    if (!this.#head.id && parsed.id) this.#head = parsed;
    if (parsed.usage) this.#usage = parsed.usage;
    for (const choice of Array.isArray(parsed.choices) ? parsed.choices : []) this.#fold(choice);
    return parsed;
  }

  /** The answer folded so far. */
  result(): Record<string, unknown> {
    const head = this.#head;
    const textCompletion = head.object === "text_completion";
    return {
      id: head.id,
      object: textCompletion ? "text_completion" : "chat.completion",
      created: head.created,
      model: head.model,
      system_fingerprint: head.system_fingerprint,
      choices: [...this.#choices.values()].map((choice) =>
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
      usage: this.#usage,
      streamed_chunks: this.#count,
    };
  }

  #choiceAt(index: number): AssembledChoice {
    let entry = this.#choices.get(index);
    if (!entry) {
      entry = { index, content: "", reasoning: "", text: "", tool_calls: [], finish_reason: null };
      this.#choices.set(index, entry);
    }
    return entry;
  }

  #fold(choice: any): void {
    const entry = this.#choiceAt(choice?.index ?? 0);
    const delta = choice?.delta ?? {};
    if (delta.role) entry.role = delta.role;
    if (typeof delta.content === "string") entry.content += delta.content;
    if (typeof delta.reasoning_content === "string") entry.reasoning += delta.reasoning_content;
    if (typeof choice?.text === "string") entry.text += choice.text;
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      const position = call?.index ?? 0;
      entry.tool_calls[position] ??= { function: { name: "", arguments: "" } };
      const slot = entry.tool_calls[position];
      if (call.id) slot.id = call.id;
      if (call.type) slot.type = call.type;
      if (call.function?.name) slot.function.name += call.function.name;
      if (call.function?.arguments) slot.function.arguments += call.function.arguments;
    }
    if (choice?.finish_reason) entry.finish_reason = choice.finish_reason;
  }
}

/** The answer a whole list of chunks spells (StreamAssembler over all of them). */
export function assembleStream(chunks: Array<object | string>): Record<string, unknown> {
  const assembler = new StreamAssembler();
  for (const chunk of chunks) assembler.add(chunk);
  return assembler.result();
}

/**
 * The tail of an OpenAI chunk that only adds text to one choice, as almost every chunk of a stream does:
 * `"choices":[{"index":0,"delta":{"content":"..."},"logprobs":null,"finish_reason":null}]}`, optionally followed
 * by the fields OpenAI adds to every chunk, in any order: `"usage":null` (when usage was asked for, as the
 * gateway always asks) and `"obfuscation":"..."` (random padding, on by default). Anchored at the end, so
 * nothing else can follow.
 */
const CONTENT_ONLY_TAIL =
  /"choices":\[\{"index":(\d+),"delta":\{"content":("(?:[^"\\]|\\.)*")\},"logprobs":null,"finish_reason":null\}\](?:,"usage":null|,"obfuscation":"(?:[^"\\]|\\.)*")*\}$/y;

/**
 * A content-only chunk after the first, from its text: its choice index (group 1) and its content as a JSON
 * string (group 2). Parsing every chunk whole was the largest single cost of logging a streamed answer (about
 * 2 µs per chunk). Anything else (other fields after `choices`, tool calls, a finish reason, usage) returns
 * null and the chunk is parsed whole. The envelope before `choices` (id, model...) is the first chunk's, which
 * is always parsed whole.
 */
function contentDelta(chunk: string): RegExpExecArray | null {
  const start = chunk.lastIndexOf('"choices":');
  if (start === -1) return null;
  CONTENT_ONLY_TAIL.lastIndex = start;
  return CONTENT_ONLY_TAIL.exec(chunk);
}

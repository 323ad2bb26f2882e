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
  readonly #kind: "chat" | "text" | undefined;

  /**
   * `kind`: the answer's shape, known from the route (chat completions or completions); without it the first
   * chunk's `object` decides. Providers do not all name a completions chunk `text_completion`, and the shape
   * decides which text is kept (and counted when usage has to be estimated).
   */
  constructor(kind?: "chat" | "text") {
    this.#kind = kind;
  }

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
          // Without escapes (or raw control characters, which JSON refuses) the JSON string is its text between
          // the quotes: most pieces of text are.
          this.#choiceAt(Number(delta[1])).content += NEEDS_PARSING.test(quoted)
            ? JSON.parse(quoted)
            : quoted.slice(1, -1);
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
    for (const choice of Array.isArray(parsed.choices) ? parsed.choices : []) {
      if (choice !== null && typeof choice === "object") this.#fold(choice);
    }
    return parsed;
  }

  /** Whether a choice was given its finish reason: an answer that ended as its provider meant it to. */
  finished(): boolean {
    for (const choice of this.#choices.values()) if (choice.finish_reason !== null) return true;
    return false;
  }

  /** The answer folded so far. */
  result(): Record<string, unknown> {
    const head = this.#head;
    const textCompletion = this.#kind ? this.#kind === "text" : head.object === "text_completion";
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

  /** One choice of a parsed chunk. Whatever a provider sends, this must not throw: it runs as the stream is sent. */
  #fold(choice: Record<string, any>): void {
    const entry = this.#choiceAt(typeof choice.index === "number" ? choice.index : 0);
    const delta = choice.delta !== null && typeof choice.delta === "object" ? choice.delta : {};
    if (typeof delta.role === "string") entry.role = delta.role;
    if (typeof delta.content === "string") entry.content += delta.content;
    if (typeof delta.reasoning_content === "string") entry.reasoning += delta.reasoning_content;
    if (typeof choice.text === "string") entry.text += choice.text;
    for (const call of Array.isArray(delta.tool_calls) ? delta.tool_calls : []) {
      if (call === null || typeof call !== "object") continue;
      const position = call.index ?? 0;
      // A list position only (no "__proto__", no huge sparse index).
      if (!Number.isInteger(position) || position < 0 || position >= MAX_TOOL_CALLS) continue;
      entry.tool_calls[position] ??= { function: { name: "", arguments: "" } };
      const slot = entry.tool_calls[position];
      const fn = call.function !== null && typeof call.function === "object" ? call.function : {};
      if (typeof call.id === "string") slot.id = call.id;
      if (typeof call.type === "string") slot.type = call.type;
      if (typeof fn.name === "string") slot.function.name += fn.name;
      if (typeof fn.arguments === "string") slot.function.arguments += fn.arguments;
    }
    if (typeof choice.finish_reason === "string") entry.finish_reason = choice.finish_reason;
  }
}

/** Tool calls one choice may gather (OpenAI allows 128 tools); a larger index is ignored. */
const MAX_TOOL_CALLS = 1024;

/** A JSON string with an escape or a raw control character: JSON.parse decides (it refuses the latter). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding raw control characters is the point.
const NEEDS_PARSING = /[\\\u0000-\u001f]/;

/** The answer a whole list of chunks spells (StreamAssembler over all of them). */
export function assembleStream(chunks: Array<object | string>, kind?: "chat" | "text"): Record<string, unknown> {
  const assembler = new StreamAssembler(kind);
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
  // A usage object in the envelope (before `choices`) must be read: such a chunk is parsed whole.
  const usage = chunk.indexOf('"usage":');
  if (usage !== -1 && usage < start && !chunk.startsWith('"usage":null', usage)) return null;
  CONTENT_ONLY_TAIL.lastIndex = start;
  return CONTENT_ONLY_TAIL.exec(chunk);
}

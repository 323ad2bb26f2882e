import { isCompleteAnswer } from "../cache/replay.ts";
import { StreamAssembler } from "../gateway/stream/assembly.ts";
import type { SseSource } from "../gateway/stream/sse-source.ts";
import { SseDecoder } from "../../providers/stream/sse.ts";
import { endsFormatAnswer } from "../formats/terminal-events.ts";
import type { EventAssembler, InboundFormat } from "../formats/types.ts";
import type { TypedEvent } from "../../providers/types.ts";

/** What a guarded stream is made of: OpenAI chunks (`chat` / `text`) or an event-typed format's events. */
export type StreamKind = "chat" | "text" | InboundFormat;

/**
 * Output guardrails on a streamed answer. The client gets every chunk as it comes except the last events (the
 * chunk with the finish reason, the usage chunk, `[DONE]`): those are held until the output checks have judged
 * the assembled answer, then released, or replaced by the denial. A redacting guardrail cannot rewrite chunks
 * already sent: then the whole stream is read first (`readWholeStream`) and the caller answers anew.
 *
 * Guarded streams are re-framed: each event is sent as `data: <its data>` lines, whatever framing the
 * provider used (the same events, not always the same bytes).
 */

/** Runs the output checks on the whole answer; returns what to send in place of the held events (undefined: them). */
export type StreamJudge = (answer: Record<string, unknown>) => Promise<string | undefined>;

/** The events of a stream's pieces: each re-framed, whether it ends the answer, and the answer they spell. */
class AnswerTracker {
  readonly #decoder = new SseDecoder();
  readonly #assembler: StreamAssembler;
  readonly #format: { format: InboundFormat; assembler: EventAssembler } | undefined;
  /** An error event passed (the provider's stream failed after its first chunk). */
  failed = false;

  constructor(kind: StreamKind) {
    this.#assembler = new StreamAssembler(typeof kind === "string" ? kind : "chat");
    if (typeof kind !== "string") this.#format = { format: kind, assembler: kind.assembler() };
  }

  events(piece: string | Uint8Array): Array<{ text: string; last: boolean }> {
    const bytes = typeof piece === "string" ? Buffer.from(piece) : piece;
    return this.#decoder.push(bytes).map((event) => {
      const text = `${event.event ? `event: ${event.event}\n` : ""}${event.data
        .split("\n")
        .map((line) => `data: ${line}`)
        .join("\n")}\n\n`;
      if (this.#format) return { text, last: this.#foldTyped(event.data) };
      if (event.data === "[DONE]") return { text, last: true };
      // Content-only chunks come back undefined (read from their text): they never end an answer.
      const chunk = this.#assembler.add(event.data);
      if (chunk?.error !== undefined && chunk.error !== null) this.failed = true;
      return { text, last: chunk !== undefined && endsAnswer(chunk) };
    });
  }

  /** Folds one event of a typed format; true when it ends the answer. */
  #foldTyped(data: string): boolean {
    let event: TypedEvent;
    try {
      event = JSON.parse(data) as TypedEvent;
    } catch {
      return false;
    }
    if (typeof event?.type !== "string") return false;
    this.#format!.assembler.add(event);
    if (event.type === "error" || event.type === "response.failed") this.failed = true;
    return endsFormatAnswer(event);
  }

  /** The answer, when the stream spelled a whole one (every choice finished, no error). */
  completeAnswer(): Record<string, unknown> | undefined {
    if (this.failed) return undefined;
    if (this.#format) {
      const answer = this.#format.assembler.result();
      return this.#format.format.isComplete(answer) ? answer : undefined;
    }
    const { streamed_chunks: _count, ...answer } = this.#assembler.result();
    return isCompleteAnswer(answer) ? answer : undefined;
  }
}

/** A chunk that finishes a choice, carries only usage, or is an error: the answer's tail starts there. */
function endsAnswer(chunk: Record<string, any>): boolean {
  if (chunk.error !== undefined && chunk.error !== null) return true;
  const choices = Array.isArray(chunk.choices) ? chunk.choices : [];
  if (choices.length === 0) return chunk.usage !== undefined && chunk.usage !== null;
  return choices.some((choice: any) => typeof choice?.finish_reason === "string" && choice.finish_reason !== "");
}

/**
 * `source` with its tail held back until `judge` has seen the whole answer. A stream that ends without a whole
 * answer (it failed, or was cut) is not judged: its tail goes out as it is.
 */
export function guardStreamTail(source: SseSource, kind: StreamKind, judge: StreamJudge): SseSource {
  const tracker = new AnswerTracker(kind);
  const held: string[] = [];
  let holding = false;
  let ended = false;
  return {
    async next() {
      while (!ended) {
        const piece = await source.next();
        if (piece === null) {
          ended = true;
          const answer = tracker.completeAnswer();
          const replacement = answer ? await judge(answer) : undefined;
          const tail = replacement ?? held.join("");
          return tail === "" ? null : tail;
        }
        let release = "";
        for (const event of tracker.events(piece)) {
          holding ||= event.last;
          if (holding) held.push(event.text);
          else release += event.text;
        }
        if (release !== "") return release;
      }
      return null;
    },
    cancel: () => {
      ended = true;
      return source.cancel();
    },
  };
}

/** A stream read to its end: its text (re-framed) and, when it spelled one whole, its answer. */
export async function readWholeStream(
  source: SseSource,
  kind: StreamKind,
  signal: AbortSignal,
): Promise<{ text: string; answer?: Record<string, unknown> }> {
  const tracker = new AnswerTracker(kind);
  const texts: string[] = [];
  const onAbort = () => void source.cancel();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for (let piece = await source.next(); piece !== null; piece = await source.next()) {
      for (const event of tracker.events(piece)) texts.push(event.text);
    }
  } finally {
    signal.removeEventListener("abort", onAbort);
  }
  return { text: texts.join(""), answer: tracker.completeAnswer() };
}

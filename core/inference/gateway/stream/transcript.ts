import { SseDecoder } from "../../../providers/stream/sse.ts";
import type { LateJson, LatePayload } from "../../../observe/logs/late-json.ts";
import { StreamAssembler } from "./assembly.ts";

type TranscriptPayload = Extract<LatePayload, { kind: "sse-transcript" }>;

/**
 * Bytes of events kept for the log before the answer is folded as the events come instead: a long answer's
 * chunks are many times its text (a 100,000-token answer is ~25 MB of chunks), and a log of more than a few KB
 * is measured, so assembled, on the event loop anyway (RequestLogger).
 */
const KEEP_BYTES = 64 * 1024;

/**
 * The events of a relayed stream, gathered for the request log: kept as bytes (assembled later, off the event
 * loop: StreamTranscript) while they are few, folded into the answer as they come once they are many.
 */
export class Transcript {
  readonly #route: "chat" | "text";
  #chunks: Uint8Array[] = [];
  #bytes = 0;
  #folding: { decoder: SseDecoder; assembler: StreamAssembler } | undefined;

  constructor(route: "chat" | "text") {
    this.#route = route;
  }

  /** The events kept as bytes (none once folding). */
  get chunks(): readonly Uint8Array[] {
    return this.#chunks;
  }

  add(events: Uint8Array): void {
    if (this.#folding) {
      foldEvents(this.#folding, this.#folding.decoder.push(events));
      return;
    }
    this.#chunks.push(events);
    this.#bytes += events.length;
    if (this.#bytes <= KEEP_BYTES) return;
    this.#folding = { decoder: new SseDecoder(), assembler: new StreamAssembler(this.#route) };
    for (const chunk of this.#chunks) foldEvents(this.#folding, this.#folding.decoder.push(chunk));
    this.#chunks = [];
  }

  /** The answer for the log: assembled now when folding, else a StreamTranscript (assembled when stored). */
  answer(): Record<string, unknown> | StreamTranscript {
    if (!this.#folding) return new StreamTranscript(this.#route, this.#chunks);
    foldEvents(this.#folding, this.#folding.decoder.end());
    return this.#folding.assembler.result();
  }
}

function foldEvents(folding: { assembler: StreamAssembler }, events: Array<{ data: string }>): void {
  for (const event of events) if (event.data !== "[DONE]") folding.assembler.add(event.data);
}

/**
 * The SSE events of a relayed stream (sse-relay.ts), as the provider sent them, for the request log: the
 * answer they spell (one object like a non-streamed response, StreamAssembler) is assembled only when the log
 * is serialised, which the local storage thread does off the event loop (a LateJson value).
 */
export class StreamTranscript implements LateJson {
  readonly late: TranscriptPayload;

  constructor(route: "chat" | "text", chunks: readonly Uint8Array[]) {
    this.late = { kind: "sse-transcript", route, chunks };
  }

  /** The answer, assembled now. */
  assemble(): Record<string, unknown> {
    return assembleTranscript(this.late);
  }

  toJSON(): Record<string, unknown> {
    return this.assemble();
  }
}

/** The answer a transcript's events spell (`[DONE]` and events without data are not chunks). */
export function assembleTranscript(payload: TranscriptPayload): Record<string, unknown> {
  const folding = { decoder: new SseDecoder(), assembler: new StreamAssembler(payload.route) };
  for (const chunk of payload.chunks) foldEvents(folding, folding.decoder.push(chunk));
  foldEvents(folding, folding.decoder.end());
  return folding.assembler.result();
}

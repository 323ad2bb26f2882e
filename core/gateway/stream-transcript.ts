import { SseDecoder } from "../providers/stream/sse.ts";
import type { LateJson, LatePayload } from "../store/late-json.ts";

type TranscriptPayload = Extract<LatePayload, { kind: "sse-transcript" }>;
import { StreamAssembler } from "./stream-assembly.ts";

/**
 * The SSE events of a relayed stream (sse-relay.ts), as the provider sent them, for the request log: the
 * answer they spell (one object like a non-streamed response, StreamAssembler) is assembled only when the log
 * is serialised, which the local storage thread does off the event loop (a LateJson value).
 */
export class StreamTranscript implements LateJson {
  readonly late: TranscriptPayload;

  constructor(route: "chat" | "text", chunks: Uint8Array[]) {
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
  const decoder = new SseDecoder();
  const assembler = new StreamAssembler(payload.route);
  const add = (events: Array<{ data: string }>) => {
    for (const event of events) if (event.data !== "[DONE]") assembler.add(event.data);
  };
  for (const chunk of payload.chunks) add(decoder.push(chunk));
  add(decoder.end());
  return assembler.result();
}

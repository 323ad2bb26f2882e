import type { InboundFormat } from "../../formats/types.ts";
import type {
  TypedEvent,
  ChatUsage,
  StreamTransformer,
  StreamFraming,
  UpstreamEvent,
} from "../../../providers/types.ts";
import type { InferenceOutcome } from "../outcome.ts";
import { SseRelay } from "./sse-relay.ts";
import { StreamAssembler } from "./assembly.ts";
import { Transcript } from "./transcript.ts";
import { type IdleTimeout, readUpstreamBatches, readUpstreamEvents } from "./upstream-events.ts";

/** What is written to the client: SSE text, or the provider's bytes as they came. */
export type StreamPiece = string | Uint8Array;

const DONE = "data: [DONE]\n\n";

/**
 * How a streamed answer's upstream body becomes what the client is sent, and what the log and the cost learn
 * from it. The SSE answer (sse-answer.ts) drives one: it reads batches, hands each to `take`, and calls `end` once the body ended.
 */
export interface StreamPipeline<B> {
  batches: AsyncIterator<B>;
  /** Adds what one batch gives the client to `pending`. */
  take(batch: B, pending: StreamPiece[]): void;
  /** The body ended: adds the last pieces (`[DONE]` included). */
  end(pending: StreamPiece[]): void;
  /** The usage the provider reported, if any. */
  usage(): ChatUsage | undefined;
  /** The answer for the request log: an object, or a value assembled when stored (core/observe/logs/late-json.ts). */
  answer(): unknown;
  /** Characters (or bytes) of every chunk: a bound on the size of the answer assembled from them. */
  chars(): number;
  /**
   * Whether the upstream sent a well-formed event so far. A 200 whose body ends without one (empty, an HTML
   * page, data that is not JSON) is no answer: the SSE answer treats it as a failed target.
   */
  answered(): boolean;
}

interface PipelineOptions {
  kind: "chat" | "text";
  /** An event-typed inbound format (Responses, Messages): its events are written as `event:` + `data:`. */
  format?: InboundFormat;
  /** The client asked for usage (`stream_options.include_usage`); otherwise the usage-only chunk is hidden. */
  includeUsage: boolean;
  outcome: InferenceOutcome;
  idle: IdleTimeout;
}

/**
 * A provider whose events are transformed into OpenAI chunks: decode its framing, transform each event,
 * serialise each chunk as it is folded into the answer for the log (StreamAssembler: content-only chunks are
 * not parsed).
 */
export async function transformPipeline(
  framing: StreamFraming,
  transformer: StreamTransformer,
  body: AsyncIterable<Uint8Array>,
  options: PipelineOptions,
): Promise<StreamPipeline<UpstreamEvent[]>> {
  const batches = await readUpstreamEvents(framing, body, options.idle);
  if (options.format) return typedEventPipeline(batches, transformer, options.format, options.outcome);
  const assembler = new StreamAssembler(options.kind);
  const { outcome } = options;
  let usage: ChatUsage | undefined;
  let chars = 0;
  let events = 0;
  const emit = (chunk: object | string, pending: StreamPiece[]) => {
    const parsed = assembler.add(chunk);
    if (parsed?.usage) usage = parsed.usage;
    if (parsed?.model) outcome.answeredModel = parsed.model;
    const text = typeof chunk === "string" ? chunk : JSON.stringify(chunk);
    chars += text.length;
    // The usage-only chunk the gateway asked for on the client's behalf.
    if (!options.includeUsage && parsed?.usage && Array.isArray(parsed.choices) && parsed.choices.length === 0) return;
    pending.push(`data: ${text}\n\n`);
  };
  return {
    batches,
    take(batch, pending) {
      events += batch.length;
      for (const event of batch) for (const chunk of transformer.push(event)) emit(chunk, pending);
    },
    end(pending) {
      for (const chunk of transformer.end()) emit(chunk, pending);
      pending.push(DONE);
    },
    usage: () => usage,
    answer: () => assembler.result(),
    chars: () => chars,
    answered: () => events > 0,
  };
}

/** The SSE text of one event of an event-typed format. */
export function typedEventSse(event: TypedEvent | object): string {
  return `event: ${(event as TypedEvent).type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * A stream in an event-typed format (Responses, Messages), native or translated from chat: each event is written
 * as `event: <type>` + `data: <json>` (no `[DONE]`: these formats end with their own terminal event) and folded
 * by the format's assembler for the log, the usage and the cache.
 */
function typedEventPipeline(
  batches: AsyncIterator<UpstreamEvent[]>,
  transformer: StreamTransformer,
  format: InboundFormat,
  outcome: InferenceOutcome,
): StreamPipeline<UpstreamEvent[]> {
  const assembler = format.assembler();
  let chars = 0;
  let events = 0;
  const emit = (event: object | string, pending: StreamPiece[]) => {
    const typed = (typeof event === "string" ? JSON.parse(event) : event) as TypedEvent;
    assembler.add(typed);
    if (outcome.answeredModel === undefined) outcome.answeredModel = assembler.model();
    const text = typedEventSse(typed);
    chars += text.length;
    pending.push(text);
  };
  return {
    batches,
    take(batch, pending) {
      events += batch.length;
      for (const event of batch) for (const out of transformer.push(event)) emit(out, pending);
    },
    end(pending) {
      for (const out of transformer.end()) emit(out, pending);
    },
    usage: () => assembler.usage(),
    answer: () => assembler.result(),
    chars: () => chars,
    answered: () => events > 0,
  };
}

/**
 * A provider whose events already are OpenAI chunks: its bytes are relayed (sse-relay.ts), and the answer for
 * the log is assembled from them when the log is stored.
 */
export function relayPipeline(body: AsyncIterable<Uint8Array>, options: PipelineOptions): StreamPipeline<Uint8Array[]> {
  const relay = new SseRelay({ hideUsageOnly: !options.includeUsage, transcript: new Transcript(options.kind) });
  const batches = readUpstreamBatches(body, relay, options.idle);
  const { outcome } = options;
  return {
    batches,
    take(batch, pending) {
      if (outcome.answeredModel === undefined) outcome.answeredModel = relay.model;
      for (const piece of batch) pending.push(piece);
    },
    // The relay's last batch (delivered before the end) holds its last events and [DONE].
    end() {},
    usage: () => relay.usage,
    answer: () => relay.transcript.answer(),
    chars: () => relay.bytes,
    answered: () => relay.firstChunkValid,
  };
}

/** The pieces of one write as one: text when all are text, bytes otherwise. */
export function joinPieces(pieces: StreamPiece[]): StreamPiece {
  if (pieces.length === 1) return pieces[0]!;
  if (pieces.every((piece) => typeof piece === "string")) return pieces.join("");
  return Buffer.concat(pieces.map((piece) => (typeof piece === "string" ? Buffer.from(piece) : piece)));
}

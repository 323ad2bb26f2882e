import { formatEventText } from "../../formats/format-events.ts";
import type { FormatEvent, InboundFormat, StreamPosition } from "../../formats/types.ts";
import type { ChatUsage, StreamTransformer, StreamFraming, UpstreamEvent } from "../../../providers/types.ts";
import type { Cost } from "../../catalog/cost.ts";
import { usageWithCost } from "../cost-on-answer.ts";
import type { InferenceOutcome } from "../outcome.ts";
import { SseRelay } from "./sse-relay.ts";
import { StreamAssembler } from "./assembly.ts";
import { Transcript } from "./transcript.ts";
import { type IdleTimeout, readUpstreamBatches, readUpstreamEvents } from "./upstream-events.ts";
import { loadOnce } from "../../../util/load-once.ts";

/** The checks of streams that may be continued (strict-streams.ts), loaded with the first such stream. */
export type StrictStreams = typeof import("./strict-streams.ts");
const strictStreams = loadOnce<StrictStreams>(() => import("./strict-streams.ts"));

/**
 * Only streams that may be continued (a fallback with `on_stream_failure: "continue"`, a continuing leg) run the
 * checks: their module is loaded once, by the first of them, instead of on every cold start.
 */
export function loadStrictStreams(): Promise<StrictStreams> {
  return strictStreams.get();
}

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
  /** Event-typed formats: where the stream stands (what a continuation picks up from). */
  position?(): StreamPosition;
}

interface PipelineOptions {
  kind: "chat" | "text";
  /** An event-typed inbound format (Responses, Messages): its events are written as `event:` + `data:`. */
  format?: InboundFormat;
  /** The client asked for usage (`stream_options.include_usage`); otherwise the usage-only chunk is hidden. */
  includeUsage: boolean;
  outcome: InferenceOutcome;
  idle: IdleTimeout;
  /**
   * The stream may be continued by the next target (a fallback with `on_stream_failure: "continue"`): a break
   * the client would otherwise be sent as it is (an error event or a malformed chunk relayed, an end without a
   * finish) fails the stream instead, so the continuation can take over: the checks of strict-streams.ts, loaded
   * by the caller only for such streams (loadStrictStreams). Absent: no check.
   */
  strict?: StrictStreams;
  /** Prices reported usage (the answer's service tier applied), so the usage the client is sent carries its cost. */
  costOf?: (usage: ChatUsage, serviceTier?: string) => Cost;
}

/** A chat chunk with usage, its usage with the cost added (a new object: the assembled answer keeps its own). */
function chunkWithCost(chunk: Record<string, any>, costOf: NonNullable<PipelineOptions["costOf"]>): object {
  const tier = typeof chunk.service_tier === "string" ? chunk.service_tier : undefined;
  return { ...chunk, usage: usageWithCost(chunk.usage, costOf(chunk.usage, tier)) };
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
  if (options.format) return typedEventPipeline(batches, transformer, options.format, options);
  const assembler = new StreamAssembler(options.kind);
  const { outcome } = options;
  let usage: ChatUsage | undefined;
  let chars = 0;
  let events = 0;
  const emit = (chunk: object | string, pending: StreamPiece[]) => {
    const parsed = assembler.add(chunk);
    if (parsed?.usage) usage = parsed.usage;
    if (parsed?.model) outcome.answeredModel = parsed.model;
    let text = typeof chunk === "string" ? chunk : JSON.stringify(chunk);
    chars += text.length;
    if (parsed?.usage) {
      // The usage-only chunk the gateway asked for on the client's behalf.
      if (!options.includeUsage && Array.isArray(parsed.choices) && parsed.choices.length === 0) return;
      if (options.includeUsage && options.costOf) text = JSON.stringify(chunkWithCost(parsed, options.costOf));
    }
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
      if (options.strict && !assembler.finished()) throw options.strict.streamCut();
      pending.push(DONE);
    },
    usage: () => usage,
    answer: () => assembler.result(),
    chars: () => chars,
    answered: () => events > 0,
  };
}

/**
 * A stream in an inbound format (Responses, Messages, Gemini), native or translated from chat: each event is
 * written as its format writes it (format-events.ts: `event: <type>` + `data: <json>`, or Gemini's `data: <json>`;
 * no `[DONE]`: these formats end with their own last event) and folded by the format's assembler for the log, the
 * usage and the cache.
 */
function typedEventPipeline(
  batches: AsyncIterator<UpstreamEvent[]>,
  transformer: StreamTransformer,
  format: InboundFormat,
  { outcome, costOf, strict }: PipelineOptions,
): StreamPipeline<UpstreamEvent[]> {
  const assembler = format.assembler();
  const check = strict ? new strict.TypedEventCheck() : undefined;
  let chars = 0;
  let events = 0;
  const emit = (event: object | string, pending: StreamPiece[]) => {
    let typed = (typeof event === "string" ? JSON.parse(event) : event) as FormatEvent;
    check?.pass(typed);
    assembler.add(typed);
    if (outcome.answeredModel === undefined) outcome.answeredModel = assembler.model();
    if (costOf) typed = withResponseCost(typed, assembler.usage(), costOf);
    const text = formatEventText(format, typed);
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
      const last = transformer.end();
      if (strict && check && !check.finishes(last)) throw strict.streamCut();
      for (const out of last) emit(out, pending);
    },
    usage: () => assembler.usage(),
    answer: () => assembler.result(),
    chars: () => chars,
    answered: () => events > 0,
    position: () => assembler.position?.() ?? {},
  };
}

/** Responses' `response.completed`: its usage carries the cost (a new event: the assembled answer keeps its own). */
function withResponseCost(
  event: FormatEvent,
  usage: ChatUsage | undefined,
  costOf: NonNullable<PipelineOptions["costOf"]>,
): FormatEvent {
  const response = (event as { response?: Record<string, any> }).response;
  if (event.type !== "response.completed" || !usage || !response?.usage) return event;
  const tier = typeof response.service_tier === "string" ? response.service_tier : undefined;
  return {
    ...event,
    response: { ...response, usage: usageWithCost(response.usage, costOf(usage, tier)) },
  } as FormatEvent;
}

/**
 * A provider whose events already are OpenAI chunks: its bytes are relayed (sse-relay.ts), and the answer for
 * the log is assembled from them when the log is stored.
 */
export function relayPipeline(body: AsyncIterable<Uint8Array>, options: PipelineOptions): StreamPipeline<Uint8Array[]> {
  const { costOf } = options;
  const relay = new SseRelay({
    hideUsageOnly: !options.includeUsage,
    transcript: new Transcript(options.kind),
    withCost: options.includeUsage && costOf ? (chunk) => chunkWithCost(chunk, costOf) : undefined,
  });
  const batches = readUpstreamBatches(body, relay, options.idle);
  const { outcome } = options;
  // Strict: the relayed events are read (each parsed once) instead of passed as bytes; chosen once, not per chunk.
  const check = options.strict ? new options.strict.RelayedChunkCheck() : undefined;
  return {
    batches,
    take: check
      ? (batch, pending) => {
          if (outcome.answeredModel === undefined) outcome.answeredModel = relay.model;
          for (const piece of batch) check.pass(piece, pending);
        }
      : (batch, pending) => {
          if (outcome.answeredModel === undefined) outcome.answeredModel = relay.model;
          for (const piece of batch) pending.push(piece);
        },
    // The relay's last batch (delivered before the end) holds its last events and [DONE].
    end: check ? (pending) => check.end(pending) : () => {},
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

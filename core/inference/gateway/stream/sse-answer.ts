import { UpstreamError, type ChatUsage } from "../../../providers/types.ts";
import type { InferenceOutcome } from "../outcome.ts";
import type { UpstreamReply } from "../../../providers/upstream/client.ts";
import { joinPieces, type StreamPiece, type StreamPipeline } from "./pipelines.ts";
import { type SseSource, sseResponse } from "./sse-source.ts";
import { StreamTranscript } from "./transcript.ts";

export interface SseAnswerOptions {
  pipeline: StreamPipeline<unknown>;
  /** The provider's reply the pipeline reads: aborted when the stream fails or the client leaves. */
  upstream: Pick<UpstreamReply, "abort" | "release">;
  outcome: InferenceOutcome & { finish(): void };
  requestId: string;
  startedAt: number;
  /** Headers of the answer besides the SSE ones. */
  headers: Record<string, string>;
  /** The last event of a stream that failed after its first byte (default: an OpenAI chunk stream's error). */
  failureEvent?(failure: UpstreamError): string;
  /** Records usage and cost once the stream has ended (the answer is there to count usage the provider left out). */
  recordUsage(reported: ChatUsage | undefined, answer: Record<string, any>): Promise<void>;
}

/**
 * A provider's stream as the client's SSE answer. Resolves only once the first chunk for the client is ready:
 * until then every failure throws an UpstreamError marked as transport, so a fallback can still move on. After
 * that the status is sent, and a failure ends the stream with an error event. Once the stream has ended (or
 * failed, or the client left), the outcome gets the answer, usage and timings, and is finished exactly once.
 */
export async function sseAnswer(options: SseAnswerOptions): Promise<Response> {
  const { pipeline, upstream, outcome } = options;
  const iterator = pipeline.batches;

  /** What is ready for the client, written (and encoded) once per upstream read. */
  const pending: StreamPiece[] = [];
  let upstreamDone = await firstPieces(options, pending);
  outcome.status = 200;

  /**
   * Once: the bookkeeping of an ended stream. Started on the next turn of the event loop, so that it (the
   * answer's assembly for the log) runs after the last text is written, not before.
   */
  let finishing: Promise<void> | undefined;
  const finish = () => {
    finishing ??= finishStream(options).catch((error) =>
      console.error(`[${options.requestId}] stream bookkeeping failed`, error),
    );
    return finishing;
  };
  /** The last text was handed out (the stream ended, failed or was cancelled): next() answers null. */
  let ended = false;
  let cancelled = false;

  const source: SseSource = {
    async next() {
      if (ended) return null;
      try {
        while (pending.length === 0 && !upstreamDone) {
          const next = await iterator.next();
          // Cancelled while waiting: what the reader answers now (its end) is not the provider's end, and must
          // not be logged or counted as if the answer had finished.
          if (cancelled) return null;
          if (next.done) {
            upstreamDone = true;
            pipeline.end(pending);
            break;
          }
          pipeline.take(next.value, pending);
        }
        if (cancelled) return null;
        // One piece per upstream read: each becomes one socket write.
        const text = joinPieces(pending);
        pending.length = 0;
        if (upstreamDone) {
          ended = true;
          setImmediate(finish);
        }
        return text;
      } catch (error) {
        if (cancelled) return null;
        // After the first byte the status is sent: report the failure as a last event and end the stream.
        upstream.abort();
        const failure =
          error instanceof UpstreamError
            ? error
            : new UpstreamError(502, `The provider's stream failed: ${(error as Error).message}`);
        outcome.error = { status: failure.status, message: failure.message, code: failure.code };
        ended = true;
        setImmediate(finish);
        if (options.failureEvent) return options.failureEvent(failure);
        const event = {
          error: { message: failure.message, type: failure.type, param: failure.param, code: failure.code },
        };
        return `data: ${JSON.stringify(event)}\n\n`;
      }
    },
    async cancel() {
      if (ended) return finish();
      // The client went away: stop reading the provider.
      ended = true;
      cancelled = true;
      upstream.abort();
      try {
        await iterator.return?.();
      } finally {
        outcome.error = { status: 499, message: "client closed the stream", code: "client_closed_request" };
        await finish();
      }
    },
  };
  return sseResponse(source, options.headers);
}

/**
 * Reads the provider until the first pieces for the client are ready (true when its stream already ended). Any
 * failure until then throws an UpstreamError marked as transport, so a fallback can still move on.
 */
async function firstPieces(options: SseAnswerOptions, pending: StreamPiece[]): Promise<boolean> {
  const { pipeline, upstream } = options;
  const iterator = pipeline.batches;
  let upstreamDone = false;
  try {
    while (pending.length === 0) {
      const next = await iterator.next();
      if (next.done) {
        upstreamDone = true;
        pipeline.end(pending);
        break;
      }
      pipeline.take(next.value, pending);
    }
    // A 200 that ended, or began, with nothing usable: nothing is sent, the target failed (a fallback moves on).
    if (!pipeline.answered()) {
      throw new UpstreamError(502, "The provider answered 200 with a stream that holds no valid event.", {
        code: "invalid_upstream_stream",
        transport: true,
      });
    }
  } catch (error) {
    // Nothing reached the client yet: report it as a transport failure, so a fallback moves on.
    upstream.abort();
    upstream.release();
    await iterator.return?.()?.catch(() => {});
    throw beforeFirstChunk(error);
  }
  return upstreamDone;
}

/** The bookkeeping of an ended stream: the answer and usage recorded, the outcome finished whatever happens. */
async function finishStream(options: SseAnswerOptions): Promise<void> {
  const { pipeline, upstream, outcome } = options;
  try {
    upstream.release();
    const usage = pipeline.usage();
    let answer = pipeline.answer();
    // Without reported usage the answer is counted: it is needed now.
    if (!usage && answer instanceof StreamTranscript) answer = answer.assemble();
    outcome.responseBody = answer;
    outcome.responseChars = pipeline.chars();
    await options.recordUsage(usage, answer as Record<string, any>);
  } finally {
    // Whatever happened above, the log (which waits for `done`) must not wait forever.
    outcome.totalMs = performance.now() - options.startedAt;
    outcome.finish();
  }
}

/** A failure before the first chunk, marked as transport: nothing was sent, so a fallback may move on. */
function beforeFirstChunk(error: unknown): UpstreamError {
  if (!(error instanceof UpstreamError)) {
    return new UpstreamError(502, `The provider's stream failed before its first chunk: ${(error as Error).message}`, {
      code: "upstream_stream_failed",
      transport: true,
    });
  }
  if (error.transport || error.status === 499) return error;
  return new UpstreamError(error.status, error.message, {
    type: error.type,
    code: error.code,
    param: error.param,
    headers: error.headers,
    transport: true,
  });
}

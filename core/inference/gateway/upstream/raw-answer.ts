import { UpstreamError } from "../../../providers/types.ts";
import { type BatchDecoder, readUpstreamBatches } from "../stream/upstream-events.ts";
import type { UpstreamReply } from "../../../providers/upstream/client.ts";

/** The raw bytes of an answer, one batch per network chunk (no framing to decode). */
const RAW_CHUNKS: BatchDecoder<Uint8Array> = { push: (chunk) => chunk, end: () => undefined };

/**
 * A provider's 2xx answer relayed to the client byte for byte as it arrives (pass-through, speech audio, text
 * transcripts). Resolves once the first body chunk (or the end) arrived, so an upstream that fails before any
 * byte still throws an UpstreamError a fallback can move on from; from there the timeout bounds the silence
 * between chunks, not the whole (possibly long) answer, and a failure cuts the stream. `onEnd` runs once when
 * the relay is over (body done, failed or cancelled by the client); `onChunk` sees every chunk sent.
 */
export async function relayRawAnswer(
  upstream: UpstreamReply,
  options: {
    timeoutMs: number;
    headers: Headers;
    onEnd: () => void;
    onChunk?: (chunk: Uint8Array) => void;
  },
): Promise<Response> {
  const { status } = upstream;
  const { headers, onEnd, onChunk } = options;
  const chunks = readUpstreamBatches(upstream.body, RAW_CHUNKS, {
    idleMs: options.timeoutMs,
    onTimeout: () => upstream.abort(),
  });
  let first: IteratorResult<Uint8Array>;
  try {
    first = await chunks.next();
  } catch (error) {
    upstream.abort();
    upstream.release();
    const failure = upstream.failure(error);
    throw failure.transport || failure.status === 499
      ? failure
      : new UpstreamError(502, `The provider's answer failed before its first byte: ${failure.message}`, {
          code: "upstream_stream_failed",
          transport: true,
        });
  } finally {
    upstream.clearTimer();
  }
  let finished = false;
  const end = () => {
    if (finished) return;
    finished = true;
    upstream.release();
    onEnd();
  };
  if (first.done || status === 204 || status === 304) {
    await chunks.return?.();
    end();
    return new Response(null, { status, headers });
  }
  const firstChunk = first.value;
  onChunk?.(firstChunk);
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(firstChunk);
    },
    async pull(controller) {
      try {
        const next = await chunks.next();
        if (next.done) {
          controller.close();
          end();
        } else {
          onChunk?.(next.value);
          controller.enqueue(next.value);
        }
      } catch (error) {
        upstream.abort();
        controller.error(upstream.failure(error));
        end();
      }
    },
    async cancel() {
      upstream.abort();
      await chunks.return?.();
      end();
    },
  });
  return new Response(body, { status, headers });
}

/** Headers of one connection, never relayed (RFC 9110 7.6.1). */
export const HOP_BY_HOP_HEADERS = new Set([
  "connection",
  "keep-alive",
  "transfer-encoding",
  "trailer",
  "upgrade",
  "proxy-connection",
]);

/**
 * The provider's response headers for the client, hop-by-hop ones dropped. The body is relayed as it came
 * (never decoded), so content-encoding and content-length still describe it.
 */
export function relayedHeaders(headers: Headers): Headers {
  const out = new Headers();
  for (const [name, value] of headers) {
    if (HOP_BY_HOP_HEADERS.has(name)) continue;
    out.append(name, value);
  }
  return out;
}

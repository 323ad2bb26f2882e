import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import { type UpstreamEvent, UpstreamError } from "../types.ts";
import { type EventDecoder, eventBatches, flattenBatches } from "./sse.ts";

/**
 * Decoder for the AWS event-stream binary framing (`application/vnd.amazon.eventstream`), used by Bedrock
 * ConverseStream and InvokeModelWithResponseStream.
 *
 * A message is: total length (uint32 BE) | headers length (uint32 BE) | prelude CRC32 | headers | payload |
 * message CRC32. The codec from @smithy/eventstream-codec checks both checksums and parses headers but only
 * accepts whole messages, so this class does the framing: it buffers bytes across network chunks, cuts
 * complete messages out of the buffer (several may arrive in one chunk, one may span many chunks) and decodes
 * each into an UpstreamEvent.
 */

/** Smallest valid message: 12 bytes of prelude, no headers, no payload, 4 bytes of message CRC. */
const MIN_MESSAGE_LENGTH = 16;
/** AWS caps a message at 16 MiB of payload plus 128 KiB of headers; anything larger is a corrupt length. */
const MAX_MESSAGE_LENGTH = 16 * 1024 * 1024 + 128 * 1024 + MIN_MESSAGE_LENGTH;

const codec = new EventStreamCodec(toUtf8, fromUtf8);

export class AwsEventStreamDecoder implements EventDecoder {
  private buffer: Uint8Array = new Uint8Array(0);

  /** Feeds one network chunk; returns the messages it completed (possibly none). */
  push(chunk: Uint8Array): UpstreamEvent[] {
    if (chunk.byteLength === 0) return [];
    this.buffer = this.buffer.byteLength === 0 ? chunk : concat(this.buffer, chunk);
    const events: UpstreamEvent[] = [];
    let offset = 0;
    while (this.buffer.byteLength - offset >= 4) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset + offset, 4);
      const length = view.getUint32(0, false);
      if (length < MIN_MESSAGE_LENGTH || length > MAX_MESSAGE_LENGTH) {
        throw framingError(`invalid message length ${length}`);
      }
      if (this.buffer.byteLength - offset < length) break;
      // Copy the message so the codec's DataView sees exactly its bytes, and so the buffer can be released.
      events.push(decodeMessage(this.buffer.slice(offset, offset + length)));
      offset += length;
    }
    // Keep a private copy of the partial message (at most one) so callers may reuse their chunk buffers.
    this.buffer = offset === this.buffer.byteLength ? new Uint8Array(0) : this.buffer.slice(offset);
    return events;
  }

  /** Call at end of input: a partial message left in the buffer means the stream was cut. */
  end(): UpstreamEvent[] {
    if (this.buffer.byteLength > 0) {
      const left = this.buffer.byteLength;
      this.buffer = new Uint8Array(0);
      throw framingError(`stream ended inside a message (${left} bytes left over)`);
    }
    return [];
  }
}

/** Decodes an AWS event stream into framed events, as the pipeline expects for framing `aws-eventstream`. */
export const decodeAwsEventStream = (source: AsyncIterable<Uint8Array>): AsyncIterable<UpstreamEvent> =>
  flattenBatches(eventBatches(source, new AwsEventStreamDecoder()));

function decodeMessage(bytes: Uint8Array): UpstreamEvent {
  let headers: MessageHeaders;
  let body: Uint8Array;
  try {
    ({ headers, body } = codec.decode(bytes));
  } catch (error) {
    throw framingError(error instanceof Error ? error.message : String(error));
  }
  const messageType = headerString(headers, ":message-type") ?? "event";
  const data = toUtf8(body);
  if (messageType === "error") {
    // Generic (non-modelled) error: the code and message travel in headers, the payload is usually empty.
    const code = headerString(headers, ":error-code") ?? "UnknownError";
    const message = headerString(headers, ":error-message");
    return { event: code, messageType, data: data || JSON.stringify({ message: message ?? code }) };
  }
  const event = headerString(headers, messageType === "exception" ? ":exception-type" : ":event-type");
  return { event, messageType, data };
}

function headerString(headers: MessageHeaders, name: string): string | undefined {
  const header = headers[name];
  if (!header) return undefined;
  return typeof header.value === "string" ? header.value : String(header.value);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a, 0);
  out.set(b, a.byteLength);
  return out;
}

function framingError(detail: string): UpstreamError {
  return new UpstreamError(502, `Malformed AWS event stream from upstream: ${detail}`, {
    type: "server_error",
    code: "bad_upstream_stream",
  });
}

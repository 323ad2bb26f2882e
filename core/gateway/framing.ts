import { type EventDecoder, eventBatches, NdjsonDecoder, SseDecoder } from "../providers/stream/sse.ts";
import type { StreamFraming, UpstreamEvent } from "../providers/types.ts";

let awsEventStream: Promise<new () => EventDecoder> | undefined;

/** Splits an upstream body into events according to the provider's framing, one batch per network read. */
export async function decodeFraming(
  framing: StreamFraming,
  body: AsyncIterable<Uint8Array>,
): Promise<AsyncIterable<UpstreamEvent[]>> {
  if (framing === "sse") return eventBatches(body, new SseDecoder());
  if (framing === "ndjson") return eventBatches(body, new NdjsonDecoder());
  // Loaded on first use: only Bedrock needs the binary event-stream codec.
  awsEventStream ??= import("../providers/stream/aws-eventstream.ts").then((module) => module.AwsEventStreamDecoder);
  return eventBatches(body, new (await awsEventStream)());
}

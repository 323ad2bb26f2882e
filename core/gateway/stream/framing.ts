import { type EventDecoder, eventBatches, NdjsonDecoder, SseDecoder } from "../providers/stream/sse.ts";
import type { StreamFraming, UpstreamEvent } from "../providers/types.ts";

let awsEventStream: Promise<new () => EventDecoder> | undefined;

/** A fresh decoder for the provider's framing. */
export async function createDecoder(framing: StreamFraming): Promise<EventDecoder> {
  if (framing === "sse") return new SseDecoder();
  if (framing === "ndjson") return new NdjsonDecoder();
  // Loaded on first use: only Bedrock needs the binary event-stream codec.
  awsEventStream ??= import("../providers/stream/aws-eventstream.ts").then((module) => module.AwsEventStreamDecoder);
  return new (await awsEventStream)();
}

/** Splits an upstream body into events according to the provider's framing, one batch per network read. */
export async function decodeFraming(
  framing: StreamFraming,
  body: AsyncIterable<Uint8Array>,
): Promise<AsyncIterable<UpstreamEvent[]>> {
  return eventBatches(body, await createDecoder(framing));
}

import { type EventDecoder, NdjsonDecoder, SseDecoder } from "../../../providers/stream/sse.ts";
import type { StreamFraming } from "../../../providers/types.ts";

let awsEventStream: Promise<new () => EventDecoder> | undefined;

/** A fresh decoder for the provider's framing. */
export async function createDecoder(framing: StreamFraming): Promise<EventDecoder> {
  if (framing === "sse") return new SseDecoder();
  if (framing === "ndjson") return new NdjsonDecoder();
  // Loaded on first use: only Bedrock needs the binary event-stream codec.
  awsEventStream ??= import("../../../providers/stream/aws-eventstream.ts").then(
    (module) => module.AwsEventStreamDecoder,
  );
  return new (await awsEventStream)();
}

import { decodeNdjson, decodeSse } from "../providers/stream/sse.ts";
import type { StreamFraming, UpstreamEvent } from "../providers/types.ts";

type Decoder = (source: AsyncIterable<Uint8Array>) => AsyncIterable<UpstreamEvent>;

let awsEventStream: Promise<Decoder> | undefined;

/** Splits an upstream body into events according to the provider's framing. */
export async function decodeFraming(
  framing: StreamFraming,
  body: AsyncIterable<Uint8Array>,
): Promise<AsyncIterable<UpstreamEvent>> {
  if (framing === "sse") return decodeSse(body);
  if (framing === "ndjson") return decodeNdjson(body);
  // Loaded on first use: only Bedrock needs the binary event-stream codec.
  awsEventStream ??= import("../providers/stream/aws-eventstream.ts").then((module) => module.decodeAwsEventStream);
  return (await awsEventStream)(body);
}

/**
 * A stand-in for the `awslambda` global of the Lambda Node.js runtime, behaving as the runtime interface
 * client does for response streaming:
 * - `streamifyResponse(fn)` marks the handler; the runtime then calls it as fn(event, responseStream, context);
 * - `HttpResponseStream.from(stream, prelude)` sets the stream's content type and, just before the first
 *   write, writes the prelude as on the wire: the JSON of {statusCode, headers, cookies}, then 8 NUL bytes,
 *   then the body bytes as they are written.
 * `invoke` plays the runtime: it records every write with its time, so tests can check streaming order. The
 * AWS shape (test/aws-shape) runs the same stand-in in each Lambda instance, with a `sink` that forwards every
 * write as it happens instead of keeping it.
 */
import { Writable } from "node:stream";
import type { FunctionUrlEvent, StreamingLambdaHandler } from "../../core/platform/aws/function-url-handler.ts";

export const HTTP_INTEGRATION_CONTENT_TYPE = "application/vnd.awslambda.http-integration-response";
/** What separates the prelude's JSON from the body on the wire: 8 NUL bytes. */
export const PRELUDE_DELIMITER = new Uint8Array(8);
const DELIMITER = PRELUDE_DELIMITER;
const STREAMING = Symbol.for("aws.lambda.runtime.handler.streaming");

export interface RecordedWrite {
  bytes: Buffer;
  at: number;
}

/** The response stream the runtime hands a streaming handler (an HTTP request to the runtime API there). */
export class ResponseStream extends Writable {
  readonly writes: RecordedWrite[] = [];
  contentType: string | undefined;
  finishedAt: number | undefined;
  onBeforeFirstWrite: ((write: (chunk: Uint8Array | string) => void) => void) | undefined;
  #firstWriteDone = false;
  readonly #sink: ((bytes: Buffer, contentType: string | undefined) => void) | undefined;

  /** `sink`: where each write goes, with the stream's content type, instead of `writes` (nothing is kept). */
  constructor(
    options: { highWaterMark?: number; sink?: (bytes: Buffer, contentType: string | undefined) => void } = {},
  ) {
    super({ highWaterMark: options.highWaterMark ?? 16 * 1024 });
    this.#sink = options.sink;
    this.once("finish", () => {
      this.finishedAt = performance.now();
    });
  }

  setContentType(contentType: string): void {
    if (this.#firstWriteDone) throw new Error("setContentType must be called before the first write");
    this.contentType = contentType;
  }

  override write(chunk: any, encoding?: any, callback?: any): boolean {
    if (!this.#firstWriteDone) {
      this.#firstWriteDone = true;
      this.onBeforeFirstWrite?.((early) => super.write(early));
    }
    return super.write(chunk, encoding, callback);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (chunk.byteLength > 0 && this.#sink) this.#sink(Buffer.from(chunk), this.contentType);
    else if (chunk.byteLength > 0) this.writes.push({ bytes: Buffer.from(chunk), at: performance.now() });
    callback();
  }

  get bytes(): Buffer {
    return Buffer.concat(this.writes.map((write) => write.bytes));
  }
}

export const awslambda = {
  streamifyResponse<T extends (...args: any[]) => any>(handler: T): T {
    (handler as any)[STREAMING] = "response";
    return handler;
  },
  HttpResponseStream: {
    from(stream: ResponseStream, prelude: Record<string, unknown>): ResponseStream {
      stream.setContentType(HTTP_INTEGRATION_CONTENT_TYPE);
      const json = JSON.stringify(prelude);
      stream.onBeforeFirstWrite = (write) => {
        write(json);
        write(DELIMITER);
      };
      return stream;
    },
  },
};

/** Whether the runtime would call this handler in streaming mode (it was wrapped by streamifyResponse). */
export function isStreamingHandler(handler: unknown): boolean {
  return (handler as any)?.[STREAMING] === "response";
}

export function installAwsLambdaGlobal(): void {
  Object.assign(globalThis, { awslambda });
}

export interface Prelude {
  statusCode: number;
  headers: Record<string, string>;
  cookies?: string[];
}

export interface Invocation {
  stream: ResponseStream;
  /** Settles when the handler's promise does: the end of the invocation. */
  done: Promise<void>;
}

export interface InvocationResult {
  stream: ResponseStream;
  prelude: Prelude;
  body: Buffer;
  /** The body's writes, in order (the prelude's two writes left out). */
  bodyWrites: RecordedWrite[];
  /** When the handler's promise resolved. */
  endedAt: number;
}

export function start(
  handler: StreamingLambdaHandler,
  event: FunctionUrlEvent,
  context: Record<string, unknown> = {},
  stream = new ResponseStream(),
): Invocation {
  if ((handler as any)[STREAMING] !== "response") throw new Error("the handler is not wrapped by streamifyResponse");
  return { stream, done: handler(event, stream, context) };
}

/** Runs one invocation to its end and splits what was written into prelude and body. */
export async function invoke(
  handler: StreamingLambdaHandler,
  event: FunctionUrlEvent,
  context: Record<string, unknown> = {},
): Promise<InvocationResult> {
  const { stream, done } = start(handler, event, context);
  await done;
  const endedAt = performance.now();
  return { stream, endedAt, ...splitPrelude(stream) };
}

/** Parses the wire format: prelude JSON, 8 NUL bytes, body. */
export function splitPrelude(stream: ResponseStream): { prelude: Prelude; body: Buffer; bodyWrites: RecordedWrite[] } {
  if (stream.contentType !== HTTP_INTEGRATION_CONTENT_TYPE) throw new Error("no HTTP integration prelude was sent");
  const [, delimiterWrite, ...bodyWrites] = stream.writes;
  if (!delimiterWrite?.bytes.equals(Buffer.from(DELIMITER))) {
    throw new Error("the prelude is not followed by the 8-byte NUL delimiter");
  }
  const bytes = stream.bytes;
  const end = bytes.indexOf(Buffer.from(DELIMITER));
  return {
    prelude: JSON.parse(bytes.subarray(0, end).toString("utf8")),
    body: bytes.subarray(end + DELIMITER.length),
    bodyWrites,
  };
}

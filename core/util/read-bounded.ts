/**
 * The one way the gateway buffers a body it did not write (an upstream's answer, a client's request): never
 * more than a limit. Past it the rest is cancelled, never read, and the caller's `tooLarge` error is thrown
 * (for upstream answers, core/http/errors.ts `upstreamTooLarge`: 502 `upstream_response_too_large`). Streams
 * relayed to a client as they come are not buffered, so not limited here.
 */

/** Reads a body whole, refusing (the error `tooLarge` makes) as soon as it passes `limit` bytes. */
export async function readBounded(
  stream: ReadableStream<Uint8Array> | AsyncIterable<Uint8Array>,
  limit: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (stream instanceof ReadableStream) {
    const reader = stream.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > limit) {
        await reader.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(value);
    }
  } else {
    // Leaving a for-await early returns the iterator, which destroys a Node stream: the rest is never read.
    for await (const value of stream) {
      size += value.byteLength;
      if (size > limit) throw tooLarge();
      chunks.push(value);
    }
  }
  return Buffer.concat(chunks);
}

/**
 * A fetch Response whose body errors with `tooLarge()` once more than `limit` bytes went through it, for code
 * that reads the body itself (SDK transports: `await res.json()`, an SSE parser). Each chunk is passed on as
 * it comes; a declared `content-length` over the limit is refused before any of it is read. An event stream
 * (`text/event-stream`) is read event by event, however long it runs: there the limit is per event.
 */
export function boundedResponse(response: Response, limit: number, tooLarge: () => Error): Response {
  if (!response.body) return response;
  const declared = Number(response.headers.get("content-length") ?? "NaN");
  if (declared > limit) {
    void response.body.cancel().catch(() => {});
    throw tooLarge();
  }
  const events = response.headers.get("content-type")?.toLowerCase().startsWith("text/event-stream") === true;
  let size = 0;
  let tail: Uint8Array = new Uint8Array(0);
  const counted = response.body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        if (events) {
          // Only the bytes after the chunk's last blank line belong to an event still being read.
          const end = lastEventEnd(tail, chunk);
          size = end === -1 ? size + chunk.byteLength : chunk.byteLength - end;
          tail = chunk.subarray(Math.max(0, chunk.byteLength - 3));
        } else size += chunk.byteLength;
        // Erroring the transform cancels the source: the upstream connection is closed, nothing more is read.
        if (size > limit) controller.error(tooLarge());
        else controller.enqueue(chunk);
      },
    }),
  );
  const bounded = new Response(counted, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
  // Readers resolve relative URLs (an SSE transport's endpoint) against the answer's URL.
  Object.defineProperty(bounded, "url", { value: response.url });
  return bounded;
}

const BLANK_LINES = ["\n\n", "\r\r", "\r\n\r\n"].map((text) => Buffer.from(text));

/**
 * Where in `chunk` the last event ended (the index just past its blank line), or -1: the SSE line endings
 * (LF, CR, CRLF) doubled. `previous` is the end of the chunk before, for a blank line split between the two.
 */
function lastEventEnd(previous: Uint8Array, chunk: Uint8Array): number {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  let end = -1;
  for (const blank of BLANK_LINES) {
    const at = bytes.lastIndexOf(blank);
    if (at !== -1) end = Math.max(end, at + blank.length);
  }
  if (end !== -1 || previous.byteLength === 0) return end;
  // A blank line split between the chunks: only the seam (3 bytes either side) needs looking at.
  const seam = Buffer.concat([previous, bytes.subarray(0, 3)]);
  for (const blank of BLANK_LINES) {
    const at = seam.lastIndexOf(blank);
    if (at !== -1) end = Math.max(end, at + blank.length - previous.byteLength);
  }
  return end < 0 ? -1 : end;
}

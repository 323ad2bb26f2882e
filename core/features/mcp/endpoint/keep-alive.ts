/**
 * An MCP answer kept alive while it is awaited. A proxy in front of the gateway gives up on an answer that sends
 * nothing for its read timeout (CloudFront's 60 s on AWS, nginx's 60 s by default), and a tool call may run longer
 * than that. An answer ready within `intervalMs` goes out as the SDK made it (a JSON body keeps its HTTP status:
 * 400 for a HeaderMismatch, 404 for a removed method...). One that is not is committed to an event stream (MCP's
 * Streamable HTTP lets a server answer any request so, and clients accept both): 200 with an SSE comment at once
 * and every `intervalMs` until the answer is there, then the answer itself, its own event stream passed on as it
 * comes, or its JSON body as one `message` event. A comment is ignored by every SSE parser.
 */

const KEEP_ALIVE = new TextEncoder().encode(": keepalive\n\n");

export interface KeepAliveOptions {
  intervalMs: number;
  /** The JSON-RPC message for an answer that failed after the stream was committed. */
  lateFailure(error: unknown): unknown;
}

export async function keepAliveWhileWaiting(answer: Promise<Response>, options: KeepAliveOptions): Promise<Response> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), options.intervalMs);
  });
  try {
    const early = await Promise.race([answer, late]);
    if (early) return early;
  } finally {
    clearTimeout(timer);
  }
  return new Response(keptAlive(answer, options), {
    status: 200,
    headers: { "content-type": "text/event-stream", "cache-control": "no-cache, no-transform" },
  });
}

/** Comments until `answer` settles, then the answer's events; the answer's body is cancelled with this stream. */
function keptAlive(answer: Promise<Response>, options: KeepAliveOptions): ReadableStream<Uint8Array> {
  let beat: NodeJS.Timeout | undefined;
  let inner: ReadableStreamDefaultReader<Uint8Array> | undefined;
  let cancelled = false;
  const stopBeating = () => clearInterval(beat);
  // Its failure is told in the stream, which may be cancelled before it reads it.
  answer.catch(() => {});
  return new ReadableStream<Uint8Array>({
    start(controller) {
      // The interval has already passed without a byte: the first comment goes at once.
      controller.enqueue(KEEP_ALIVE);
      beat = setInterval(() => {
        try {
          controller.enqueue(KEEP_ALIVE);
        } catch {
          stopBeating();
        }
      }, options.intervalMs);
    },
    async pull(controller) {
      if (!inner) {
        let response: Response;
        try {
          response = await answer;
        } catch (error) {
          stopBeating();
          controller.enqueue(messageEvent(JSON.stringify(options.lateFailure(error))));
          controller.close();
          return;
        }
        stopBeating();
        if (cancelled) {
          await response.body?.cancel().catch(() => {});
          return;
        }
        if (!response.body || !response.headers.get("content-type")?.startsWith("text/event-stream")) {
          const text = await response.text();
          if (text.trim() !== "") controller.enqueue(messageEvent(text));
          controller.close();
          return;
        }
        inner = response.body.getReader();
      }
      const { done, value } = await inner.read();
      if (done) controller.close();
      else controller.enqueue(value);
    },
    cancel(reason) {
      cancelled = true;
      stopBeating();
      if (inner) return inner.cancel(reason);
      // The answer is still awaited: its body is let go of once it comes (pull may not be waiting for it).
      void answer.then(
        (response) => response.body?.cancel(reason).catch(() => {}),
        () => {},
      );
    },
  });
}

/** One SSE `message` event holding a JSON-RPC message (every line of it prefixed, as SSE requires). */
function messageEvent(json: string): Uint8Array {
  const data = json
    .split(/\r?\n/)
    .map((line) => `data: ${line}`)
    .join("\n");
  return new TextEncoder().encode(`event: message\n${data}\n\n`);
}

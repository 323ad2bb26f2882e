import type { OutgoingHttpHeaders, ServerResponse } from "node:http";
import { plainHeadersOf } from "../../http/response-headers.ts";
import type { SseSource } from "../../http/sse-source.ts";

/**
 * Writes a streamed (SSE) Response to node's ServerResponse from its source (core/http/sse-source.ts),
 * without reading the web stream: fewer promise hops per chunk, and fewer socket writes. The head is not
 * flushed on its own: Node sends it with the first chunk, in one write. Each text is written as it comes; when
 * the source ends right after a text (as it does after its last one), that text goes out with the end of the
 * response (`end(text)`: last chunk and terminating chunk in one write). A write that fills the socket's
 * buffer pauses reading the source until 'drain'. A client that disconnects before the end cancels the
 * source, once. Resolves when the response is closed (finished or not).
 */
export function writeSseResponse(res: ServerResponse, response: Response, source: SseSource): Promise<void> {
  return new Promise<void>((resolve) => {
    /** The response ended, failed or the client left: nothing more is written or read. */
    let stopped = false;
    let cancelled = false;
    /** A next() is in flight. */
    let reading = false;
    /** The last write filled the buffer: read on only after 'drain'. */
    let draining = false;
    /**
     * A text not written yet: held for the microtask in which the next read may already have settled, so
     * that, if it is the end, the text goes out with it.
     */
    let held: string | undefined;

    const cancel = () => {
      if (cancelled) return;
      cancelled = true;
      source.cancel().catch((error) => console.error("cancelling an SSE source failed", error));
    };
    const stop = () => {
      stopped = true;
      res.off("drain", onDrain);
    };
    if (res.destroyed) {
      // The client left while the answer was being prepared: its 'close' has fired already.
      cancel();
      resolve();
      return;
    }
    res.once("close", () => {
      // Closed before the last byte was handed to the socket: the client went away.
      if (!res.writableFinished) cancel();
      stop();
      resolve();
    });

    const writeHeld = () => {
      const text = held!;
      held = undefined;
      if (!res.write(text)) {
        draining = true;
        res.once("drain", onDrain);
      }
    };
    /** Counts reads: a held text is flushed by the microtask of the read started after it, not an older one. */
    let reads = 0;
    const read = () => {
      reading = true;
      const id = ++reads;
      source.next().then(onText, onFailure);
      // Queued after onText when next() has already settled (the end right after a text): then the held text
      // went out with that; else this writes it while the source works on the next one.
      queueMicrotask(() => {
        if (id === reads && held !== undefined && !stopped && !draining) writeHeld();
      });
    };
    function onText(text: string | null) {
      reading = false;
      if (stopped) return;
      if (text === null) {
        stop();
        if (held === undefined) res.end();
        else res.end(held);
        held = undefined;
        return;
      }
      if (held !== undefined) writeHeld();
      held = text;
      if (!draining) read();
    }
    function onDrain() {
      draining = false;
      if (stopped) return;
      if (held !== undefined) writeHeld();
      if (!draining && !reading) read();
    }
    function onFailure(error: unknown) {
      reading = false;
      if (stopped) return;
      // A source ends failures as a last event; one that throws leaves the response unfinishable.
      console.error("an SSE source failed", error);
      stop();
      cancel();
      res.destroy();
    }

    try {
      res.writeHead(response.status, plainHeadersOf(response) ?? nodeHeaders(response.headers));
    } catch (error) {
      onFailure(error);
      return;
    }
    read();
  });
}

/** A Response's headers for writeHead; set-cookie stays a list. */
export function nodeHeaders(headers: Headers): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  headers.forEach((value, name) => {
    out[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out["set-cookie"] = cookies;
  return out;
}

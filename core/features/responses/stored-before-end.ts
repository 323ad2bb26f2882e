import { joinPieces, type StreamPiece } from "../../inference/gateway/stream/pipelines.ts";
import { type SseSource, sseResponse, sseSourceOf } from "../../inference/gateway/stream/sse-source.ts";

/**
 * A streamed Response is stored before its last event reaches the client: a client that reads the terminal
 * event (`response.completed`, `.incomplete`, `.failed`, or `error`) and at once sends `previous_response_id` or
 * `GET /v1/responses/{id}` (OpenAI's function-calling loop does) must find it, on any process or Lambda instance.
 * Every event before the terminal one flows as it comes; the piece that holds the terminal event is kept back,
 * the source is read to its end (the provider closes its body after the terminal event: what comes after it is
 * usually nothing), and only then, once `stored` has settled (the stream's bookkeeping, which starts when the source
 * has ended, and the store write, failed or not), is it sent with what followed it.
 *
 * The gateway writes the events of Responses streams itself, whole, each starting with its `event:` line
 * (typedEventSse), so a terminal event's line is found at the start of a line of one piece.
 */

/** `event:` lines that end a Responses stream (core/inference/formats/terminal-events.ts, Responses' part). */
const TERMINAL_LINES = [
  "event: response.completed\n",
  "event: response.incomplete\n",
  "event: response.failed\n",
  "event: error\n",
];
const TERMINAL_BYTES = TERMINAL_LINES.map((line) => Buffer.from(line));

/** The streamed `response` with its terminal event held until `stored` has settled. */
export function storedBeforeLastEvent(response: Response, stored: Promise<unknown>): Response {
  const source = sseSourceOf(response);
  let ended = false;
  const held: SseSource = {
    async next() {
      if (ended) return null;
      const piece = await source.next();
      if (piece === null) ended = true;
      if (piece === null || !holdsTerminalEvent(piece)) return piece;
      const last: StreamPiece[] = [piece];
      for (let more = await source.next(); more !== null; more = await source.next()) last.push(more);
      ended = true;
      await stored;
      return joinPieces(last);
    },
    cancel: () => source.cancel(),
  };
  return sseResponse(held, Object.fromEntries(response.headers), response.status);
}

/** Whether a piece of SSE text holds a terminal event's `event:` line (at the piece's start or a line's start). */
function holdsTerminalEvent(piece: string | Uint8Array): boolean {
  if (typeof piece === "string") {
    return TERMINAL_LINES.some((line) => piece.startsWith(line) || piece.includes(`\n${line}`));
  }
  const bytes = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
  return TERMINAL_BYTES.some((line) => {
    for (let at = bytes.indexOf(line); at !== -1; at = bytes.indexOf(line, at + 1)) {
      if (at === 0 || bytes[at - 1] === 0x0a) return true;
    }
    return false;
  });
}

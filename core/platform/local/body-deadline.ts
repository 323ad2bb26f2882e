import type { IncomingMessage } from "node:http";
import { HttpError } from "../../http/errors.ts";

/**
 * The time a request's body may take to arrive (GATEWAY_BODY_TIMEOUT_MS), counted from its headers. node:http's
 * own `requestTimeout` is off (server.ts): it would also cut a long upload that is merely slow to start, and it
 * answers with a bare 408 on the socket. Without any bound, a client that sends its body a byte at a time holds
 * a request (and its connection) for ever.
 *
 * When the deadline passes before the body is whole, whoever reads it (`request.text()`, a body stream) gets a
 * 408 HttpError `request_timeout`, so the app answers 408 in the caller's error shape, with `connection: close`.
 * The error is handed to the readers as an 'error' event of the incoming message rather than by destroying it,
 * which would close the socket before that answer could be written. A body nobody reads yet is looked at again
 * each second until a reader comes, the body ends or the client goes.
 */
export function watchBodyDeadline(incoming: IncomingMessage, timeoutMs: number): void {
  if (!hasBody(incoming) || incoming.complete) return;
  const timer = setTimeout(() => expire(incoming, timeoutMs), timeoutMs);
  // 'close' follows the body's end (and a client leaving); a timer still set then finds the body complete.
  incoming.once("close", () => clearTimeout(timer));
}

const hasBody = (incoming: IncomingMessage) =>
  incoming.headers["transfer-encoding"] !== undefined ||
  (incoming.headers["content-length"] !== undefined && incoming.headers["content-length"] !== "0");

function expire(incoming: IncomingMessage, timeoutMs: number): void {
  if (incoming.complete || incoming.destroyed) return;
  if (incoming.listenerCount("error") === 0) {
    const retry = setTimeout(() => expire(incoming, timeoutMs), 1000);
    incoming.once("close", () => clearTimeout(retry));
    return;
  }
  incoming.emit("error", bodyTimedOut(timeoutMs));
  // The readers are done with it: a 'data' listener left behind (a web stream's) would push what still trickles
  // in into a stream the error closed, which throws. The rest waits paused until the socket goes.
  incoming.removeAllListeners("data");
  incoming.pause();
}

const bodyTimedOut = (timeoutMs: number) =>
  new HttpError(
    408,
    `The request body did not arrive within ${timeoutMs} ms (GATEWAY_BODY_TIMEOUT_MS). Send it at once, or raise the limit for slow uploads.`,
    { code: "request_timeout", headers: { connection: "close" } },
  );

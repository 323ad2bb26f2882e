import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Duplex } from "node:stream";
import { getRequestListener } from "@hono/node-server";
import { RESPONSE_ALREADY_SENT } from "@hono/node-server/utils/response";
import { DEFAULT_MAX_HEADER_BYTES } from "../../config/settings.ts";
import type { FetchHandler } from "../../http/app.ts";
import { takeSseSource } from "../../inference/gateway/stream/sse-source.ts";
import type { UpgradeHandler } from "../node/realtime-upgrade.ts";
import { watchBodyDeadline } from "./body-deadline.ts";
import { installLightResponse } from "./light-response.ts";
import { withNodeHeaders } from "./node-headers.ts";
import { writeSseResponse } from "./response-writer.ts";

/** How long a request's body may take to arrive (GATEWAY_BODY_TIMEOUT_MS). */
export const DEFAULT_BODY_TIMEOUT_MS = 300_000;

/**
 * Answers a request node:http could not parse. Its own answer to headers over maxHeaderSize is a bare 431 (and
 * to others a bare 400), which clients report as a reset or an empty error: this one says what was wrong, in
 * OpenAI's error shape, then lets the client finish sending before the socket closes (closing while it still
 * sends would reset the connection and lose the answer).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex, maxHeaderBytes: number): void {
  // A response of this connection already under way (keep-alive: node:http's own test), or a reset: nothing to say.
  const answering = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || answering?.headersSent || error.code === "ECONNRESET") {
    socket.destroy();
    return;
  }
  const [status, reason, code, message] = clientErrorAnswer(error.code, maxHeaderBytes);
  const json = JSON.stringify({ error: { message, type: "invalid_request_error", param: null, code } });
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(json)}\r\nconnection: close\r\n\r\n${json}`,
  );
  socket.on("error", () => {});
  socket.resume();
  setTimeout(() => socket.destroy(), 2_000).unref();
}

function clientErrorAnswer(errorCode: string | undefined, maxHeaderBytes: number): [number, string, string, string] {
  switch (errorCode) {
    case "HPE_HEADER_OVERFLOW":
      return [
        431,
        "Request Header Fields Too Large",
        "request_headers_too_large",
        `The request headers are larger than the limit of ${maxHeaderBytes} bytes (GATEWAY_MAX_HEADER_BYTES). ` +
          "Send a large config as a saved config (x-gateway-config: <id>) instead of inline.",
      ];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "Request Timeout", "request_timeout", "The request headers did not arrive in time."];
    default:
      return [400, "Bad Request", "bad_request", "The request is not valid HTTP."];
  }
}

export interface RunningServer {
  server: Server;
  /** e.g. http://127.0.0.1:8787 */
  url: string;
  /** Stops accepting, lets in-flight requests finish (up to `graceMs`), then closes the rest. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Serves a fetch-style app over node:http with keep-alive. A client that disconnects aborts the request's
 * signal (so upstream calls are cancelled); `waitUntil` work is tracked and awaited on close.
 */
export async function startServer(
  fetchHandler: FetchHandler,
  options: {
    port: number;
    host: string;
    pending: Set<Promise<unknown>>;
    maxHeaderBytes?: number;
    /** GATEWAY_BODY_TIMEOUT_MS: how long a request's body may take to arrive (body-deadline.ts). */
    bodyTimeoutMs?: number;
    /**
     * Whether a new request may be served now (undefined) or when (a promise): the request-log backlog gate
     * (log-backlog-gate.ts). In-flight requests are never held.
     */
    admit?: () => Promise<void> | undefined;
    /** Serves WebSocket upgrades (the realtime proxy, core/platform/node/realtime-upgrade.ts), given waitUntil. */
    upgrade?: (waitUntil: (work: Promise<unknown>) => void) => UpgradeHandler;
  },
): Promise<RunningServer> {
  const admit = options.admit;
  const waitUntil = (work: Promise<unknown>) => {
    const tracked = work
      .catch((error) => console.error("background work failed", error))
      .finally(() => options.pending.delete(tracked));
    options.pending.add(tracked);
  };
  // The adapter's lightweight Request/Response (its default): a JSON answer built with `new Response(string)` is
  // written straight to the socket, with no web stream read in between (a third of the data plane's CPU). At this
  // edge too: request headers read from node's parsed ones (node-headers.ts), response headers kept as the record
  // they were built from (light-response.ts), and a streamed answer whose SSE source the core offers
  // (takeSseSource, core/inference/gateway/stream/sse-source.ts) written here from the source (response-writer.ts), the
  // adapter being told it was sent; every other response goes through the adapter.
  // (RESPONSE_ALREADY_SENT must be a native Response, not the adapter's lightweight one: it is, as its module is
  // evaluated with this one's imports, before any getRequestListener call replaces the global Response.)
  const listener = getRequestListener(
    async (request, env) => {
      const held = admit?.();
      if (held) await held;
      const target = (env.incoming as IncomingMessage).url ?? "/";
      const query = target.indexOf("?");
      const response = await fetchHandler(withNodeHeaders(request, (env.incoming as IncomingMessage).headers), {
        waitUntil,
        path: query === -1 ? target : target.slice(0, query),
        signal: request.signal,
      });
      const source = takeSseSource(response);
      if (!source) return response;
      void writeSseResponse(env.outgoing as ServerResponse, response, source);
      return RESPONSE_ALREADY_SENT;
    },
    {
      overrideGlobalObjects: true,
    },
  );
  installLightResponse();
  const maxHeaderBytes = options.maxHeaderBytes ?? DEFAULT_MAX_HEADER_BYTES;
  const bodyTimeoutMs = options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS;
  // No requestTimeout (it would bound the whole request, headers to last byte, answering a bare 408): a body's
  // time is bounded by body-deadline.ts instead, with an answer in the caller's error shape.
  const server = createServer(
    { keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0, maxHeaderSize: maxHeaderBytes },
    (incoming, outgoing) => {
      watchBodyDeadline(incoming, bodyTimeoutMs);
      return listener(incoming, outgoing);
    },
  );
  server.headersTimeout = 66_000;
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Duplex) =>
    answerClientError(error, socket, maxHeaderBytes),
  );
  const upgrades = options.upgrade?.(waitUntil);
  if (upgrades) server.on("upgrade", (request, socket, head) => upgrades.handle(request, socket, head));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  const url = `http://${host === "0.0.0.0" || host === "[::]" ? "127.0.0.1" : host}:${address.port}`;

  return {
    server,
    url,
    async close(graceMs = 10_000) {
      // Upgraded connections are no longer the HTTP server's to close: their sessions end first (1001).
      const sessionsClosed = upgrades?.close();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Keep-alive connections become idle as their last response ends: close them as they do.
      const sweeper = setInterval(() => server.closeIdleConnections(), 50);
      const timer = setTimeout(() => server.closeAllConnections(), graceMs);
      server.closeIdleConnections();
      await sessionsClosed;
      await closed;
      clearInterval(sweeper);
      clearTimeout(timer);
      await Promise.allSettled([...options.pending]);
    },
  };
}

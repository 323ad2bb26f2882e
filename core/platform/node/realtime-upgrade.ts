import { type IncomingMessage, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { HttpError, errorResponse } from "../../http/errors.ts";
import { type RealtimeConnector, openRealtimeSession } from "../../inference/realtime/session.ts";
import { family as realtime } from "../../routes/table/realtime.ts";
import type { Services } from "../../services.ts";
import { connectWebSocket } from "./ws-connect.ts";
import { relaySocketOf } from "./ws-socket.ts";

/** The realtime route's path, read from the route table (the one list of routes). */
export const REALTIME_PATH = realtime.routes[0]!.path;

/** What a node:http server's `upgrade` event is handed to; `close` ends every session (1001) on shutdown. */
export interface UpgradeHandler {
  handle(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): Promise<void>;
}

export interface RealtimeUpgradeOptions {
  /** Work that must finish before shutdown (the sessions' logs). */
  waitUntil(work: Promise<unknown>): void;
  /** Opens the provider's socket; `ws` with the SSRF-guarded lookup unless a test swaps it. */
  connect?: RealtimeConnector;
}

/** How long shutdown waits for sessions to finish their closing handshakes before cutting them. */
const SHUTDOWN_GRACE_MS = 3_000;

/**
 * The realtime WebSocket proxy on a node:http server (the local server and the AWS container service): an
 * `upgrade` for `/v1/realtime` is checked and connected by the core (core/inference/realtime/session.ts) BEFORE it is
 * accepted, so a refusal is an HTTP answer (401, 403, 429, 400, the provider's status) with OpenAI's error
 * body; then `ws` accepts it and the core relays the session. Upgrades of any other path: 404, then the
 * connection is closed.
 */
export function createRealtimeUpgrade(services: Services, options: RealtimeUpgradeOptions): UpgradeHandler {
  const connect = options.connect ?? connectWebSocket;
  const server = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: services.settings.GATEWAY_REALTIME_MAX_MESSAGE_BYTES,
  });
  const extraHeaders = new WeakMap<IncomingMessage, Record<string, string>>();
  server.on("headers", (lines, request) => {
    for (const [name, value] of Object.entries(extraHeaders.get(request) ?? {})) lines.push(`${name}: ${clean(value)}`);
  });
  const sessions = new Set<WebSocket>();
  const running = new Set<Promise<unknown>>();
  let closing = false;

  const serve = async (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => {});
    const path = (request.url ?? "/").split("?")[0]!;
    if (path !== REALTIME_PATH && path !== `${REALTIME_PATH}/`) {
      const error = new HttpError(404, `Invalid URL (${request.method} ${path}): no WebSocket endpoint here.`, {
        type: "invalid_request_error",
        code: "unknown_url",
      });
      return writeRefusal(socket, errorResponse(error));
    }
    const problem = handshakeProblem(request);
    if (problem || closing) {
      const error = closing
        ? new HttpError(503, "The gateway is shutting down.", { code: "service_unavailable" })
        : new HttpError(400, problem!, { code: "invalid_websocket_handshake" });
      return writeRefusal(socket, errorResponse(error));
    }
    const clientGone = new AbortController();
    const onGone = () => clientGone.abort();
    socket.once("close", onGone);
    const opening = await openRealtimeSession(requestOf(request), services, {
      path: REALTIME_PATH,
      connect,
      waitUntil: options.waitUntil,
      signal: clientGone.signal,
    });
    socket.off("close", onGone);
    if (!opening.accepted) return writeRefusal(socket, opening.response);
    if (clientGone.signal.aborted || socket.destroyed || closing) {
      opening.abandon();
      socket.destroy();
      return;
    }
    extraHeaders.set(request, opening.headers);
    let accepted = false;
    // ws accepts synchronously here (no verifyClient), or destroys a socket that is no longer writable.
    server.handleUpgrade(request, socket, head, (ws) => {
      accepted = true;
      sessions.add(ws);
      track(opening.start(relaySocketOf(ws)).finally(() => sessions.delete(ws)));
    });
    if (!accepted) opening.abandon();
  };

  const track = (work: Promise<unknown>) => {
    const tracked = work
      .catch((error) => console.error("realtime session failed", error))
      .finally(() => running.delete(tracked));
    running.add(tracked);
  };

  return {
    handle(request, socket, head) {
      track(
        serve(request, socket, head).catch((error) => {
          console.error("realtime upgrade failed", error);
          socket.destroy();
        }),
      );
    },
    async close() {
      closing = true;
      for (const ws of sessions) ws.close(1001, "the gateway is shutting down");
      const grace = new Promise((resolve) => setTimeout(resolve, SHUTDOWN_GRACE_MS).unref());
      await Promise.race([Promise.allSettled([...running]), grace]);
      for (const ws of sessions) ws.terminate();
      await Promise.allSettled([...running]);
      server.close();
    },
  };
}

/** Why an upgrade is not a WebSocket handshake `ws` would accept (it would answer 400 itself, unseen by us). */
function handshakeProblem(request: IncomingMessage): string | undefined {
  if (request.method !== "GET") return "A WebSocket handshake is a GET request.";
  if (request.headers.upgrade?.toLowerCase() !== "websocket") return "Upgrade must be 'websocket'.";
  const key = request.headers["sec-websocket-key"];
  if (!key || !/^[+/0-9A-Za-z]{22}==$/.test(key)) return "Missing or invalid Sec-WebSocket-Key.";
  const version = request.headers["sec-websocket-version"];
  if (version !== "13" && version !== "8") return "Unsupported Sec-WebSocket-Version (13 is).";
  return undefined;
}

/** The upgrade as a fetch Request (what authentication and routing read): its URL and headers, no body. */
function requestOf(request: IncomingMessage): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    for (const item of Array.isArray(value) ? value : [value]) headers.append(name, item);
  }
  return new Request(new URL(request.url ?? "/", "http://gateway.invalid"), { method: "GET", headers });
}

/** Answers an upgrade with an HTTP response and closes the connection. */
async function writeRefusal(socket: Duplex, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  if (socket.destroyed || !socket.writable) return void socket.destroy();
  const lines = [`HTTP/1.1 ${response.status} ${STATUS_CODES[response.status] ?? "Error"}`];
  response.headers.forEach((value, name) => {
    if (name !== "content-length" && name !== "connection") lines.push(`${name}: ${clean(value)}`);
  });
  lines.push(`content-length: ${body.byteLength}`, "connection: close");
  socket.end(Buffer.concat([Buffer.from(`${lines.join("\r\n")}\r\n\r\n`), body]));
  setTimeout(() => socket.destroy(), 2_000).unref();
}

/** A header value cannot carry a line break. */
function clean(value: string): string {
  return value.replace(/[\r\n]+/g, " ");
}

/**
 * The frames of the Responses WebSocket mode that are not `response.*` events (core/features/responses/websocket/session.ts),
 * and the HTTP request a turn becomes.
 */

/** OpenAI's error event of a Responses WebSocket: the HTTP status the same failure has, and its error object. */
export function errorFrame(
  status: number,
  type: string,
  code: string | null,
  message: string,
  param?: string | null,
): Record<string, unknown> {
  return { type: "error", status, error: { type, code, message, param: param ?? null } };
}

/** Headers of the upgrade that describe the socket, not a request: never copied onto a turn. */
const SOCKET_HEADERS = new Set([
  "host",
  "connection",
  "upgrade",
  "content-length",
  "content-type",
  "transfer-encoding",
  "sec-websocket-key",
  "sec-websocket-version",
  "sec-websocket-extensions",
  "sec-websocket-protocol",
]);

/** A turn as the HTTP request `POST /v1/responses` with the upgrade's headers (credentials, routing, metadata). */
export function turnRequest(upgrade: Request, body: Record<string, unknown>): Request {
  const headers = new Headers();
  upgrade.headers.forEach((value, name) => {
    if (!SOCKET_HEADERS.has(name)) headers.set(name, value);
  });
  headers.set("content-type", "application/json");
  const url = new URL("/v1/responses", upgrade.url);
  return new Request(url, { method: "POST", headers, body: JSON.stringify(body) });
}

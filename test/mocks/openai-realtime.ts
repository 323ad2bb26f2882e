import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { type WebSocket, WebSocketServer } from "ws";

/**
 * A mock of OpenAI's Realtime API over WebSocket (platform.openai.com/docs/api-reference/realtime: client events
 * session.update, conversation.item.create, response.create; server events session.created, session.updated,
 * conversation.item.created, response.created, response.output_text.delta, response.done with `response.usage`),
 * on 127.0.0.1. It accepts `/v1/realtime?model=…` with `Authorization: Bearer <key>` (OpenAI) and
 * `/openai/realtime?api-version=…&deployment=…` or `/openai/v1/realtime?model=…` with `api-key` (Azure OpenAI,
 * learn.microsoft.com "GPT Realtime API via WebSockets"); a wrong key is refused 401 with OpenAI's error body.
 * Test hooks, not OpenAI's: a binary frame is echoed back as it came, a `test.close` event makes the server
 * close with its `code` and `reason`, and `test.large` sends a binary frame of `bytes` bytes.
 */

export const REALTIME_KEY = "sk-realtime-test-key";

/** The usage of every `response.done` this mock sends. */
export const RESPONSE_USAGE = {
  total_tokens: 300,
  input_tokens: 120,
  output_tokens: 180,
  input_token_details: {
    text_tokens: 20,
    audio_tokens: 100,
    cached_tokens: 10,
    cached_tokens_details: { text_tokens: 10, audio_tokens: 0 },
  },
  output_token_details: { text_tokens: 30, audio_tokens: 150 },
};

export interface RealtimeConnection {
  url: string;
  headers: IncomingMessage["headers"];
  /** What the client sent, in order: parsed events, or Buffers for binary frames. */
  received: Array<Record<string, any> | Buffer>;
  /** Set when the connection closed: the code the gateway closed it with. */
  closedWith?: { code: number; reason: string };
  closed: Promise<void>;
}

export interface RealtimeMock {
  /** http://127.0.0.1:port */
  url: string;
  connections: RealtimeConnection[];
  close(): Promise<void>;
}

export async function startRealtimeMock(): Promise<RealtimeMock> {
  const connections: RealtimeConnection[] = [];
  const http = createServer((_request, response) => response.writeHead(426).end());
  const wss = new WebSocketServer({ noServer: true });
  http.on("upgrade", (request, socket, head) => {
    const url = new URL(request.url ?? "/", "http://mock");
    const azure = url.pathname.startsWith("/openai/");
    const authorised = azure
      ? request.headers["api-key"] === REALTIME_KEY
      : request.headers.authorization === `Bearer ${REALTIME_KEY}`;
    const known =
      url.pathname === "/v1/realtime" || url.pathname === "/openai/realtime" || url.pathname === "/openai/v1/realtime";
    if (!known || !authorised) {
      const status = known ? 401 : 404;
      const body = JSON.stringify({
        error: {
          message: known ? "Incorrect API key provided." : "Not found",
          type: "invalid_request_error",
          param: null,
          code: known ? "invalid_api_key" : null,
        },
      });
      socket.end(
        `HTTP/1.1 ${status} ${known ? "Unauthorized" : "Not Found"}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
      );
      return;
    }
    wss.handleUpgrade(request, socket, head, (ws) => play(ws, request));
  });

  function play(ws: WebSocket, request: IncomingMessage) {
    const url = new URL(request.url ?? "/", "http://mock");
    let resolveClosed!: () => void;
    const connection: RealtimeConnection = {
      url: request.url ?? "/",
      headers: request.headers,
      received: [],
      closed: new Promise((resolve) => {
        resolveClosed = resolve;
      }),
    };
    connections.push(connection);
    let n = 0;
    const send = (event: Record<string, unknown>) => ws.send(JSON.stringify({ event_id: `event_${++n}`, ...event }));
    const model = url.searchParams.get("model") ?? url.searchParams.get("deployment") ?? "gpt-realtime";
    send({ type: "session.created", session: { id: "sess_1", object: "realtime.session", model } });
    ws.on("message", (data, isBinary) => {
      const bytes = Buffer.isBuffer(data) ? data : Buffer.concat(data as Buffer[]);
      if (isBinary) {
        connection.received.push(bytes);
        ws.send(bytes, { binary: true });
        return;
      }
      const event = JSON.parse(bytes.toString("utf8"));
      connection.received.push(event);
      switch (event.type) {
        case "session.update":
          send({
            type: "session.updated",
            session: { id: "sess_1", object: "realtime.session", model, ...event.session },
          });
          break;
        case "conversation.item.create":
          send({ type: "conversation.item.created", item: { id: "item_1", ...event.item } });
          break;
        case "response.create": {
          const id = `resp_${n}`;
          send({ type: "response.created", response: { id, object: "realtime.response", status: "in_progress" } });
          send({
            type: "response.output_text.delta",
            response_id: id,
            item_id: "item_2",
            output_index: 0,
            content_index: 0,
            delta: "Hel",
          });
          send({
            type: "response.output_text.delta",
            response_id: id,
            item_id: "item_2",
            output_index: 0,
            content_index: 0,
            delta: "lo",
          });
          send({
            type: "response.done",
            response: { id, object: "realtime.response", status: "completed", output: [], usage: RESPONSE_USAGE },
          });
          break;
        }
        case "test.close":
          ws.close(event.code, event.reason);
          break;
        case "test.large":
          ws.send(Buffer.alloc(event.bytes, 0x61), { binary: true });
          break;
      }
    });
    ws.on("close", (code, reason) => {
      connection.closedWith = { code, reason: reason.toString() };
      resolveClosed();
    });
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const port = (http.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    connections,
    async close() {
      for (const client of wss.clients) client.terminate();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

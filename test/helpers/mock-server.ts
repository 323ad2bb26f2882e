import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
  json(): any;
}

export type MockRoute = (request: RecordedRequest, response: ServerResponse) => void | Promise<void>;

export interface MockServer {
  url: string;
  requests: RecordedRequest[];
  /** Replaces the handler (tests switch behaviour between cases). */
  handle(route: MockRoute): void;
  close(): Promise<void>;
}

/** A real HTTP server on 127.0.0.1 that records what the gateway sent and answers as a provider would. */
export async function startMockServer(route: MockRoute): Promise<MockServer> {
  let current = route;
  const requests: RecordedRequest[] = [];
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const recorded: RecordedRequest = {
      method: req.method ?? "GET",
      path: req.url ?? "/",
      headers: req.headers,
      body,
      json: () => JSON.parse(body.toString("utf8")),
    };
    requests.push(recorded);
    try {
      await current(recorded, res);
    } catch (error) {
      if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    handle(next) {
      current = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Writes SSE events one by one, with an optional pause between them (to prove streaming is not buffered). */
export async function writeSse(
  res: ServerResponse,
  events: Array<{ event?: string; data: unknown }>,
  delayMs = 0,
): Promise<void> {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  for (const { event, data } of events) {
    const payload = typeof data === "string" ? data : JSON.stringify(data);
    res.write(`${event ? `event: ${event}\n` : ""}data: ${payload}\n\n`);
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
  res.end();
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify(body));
}

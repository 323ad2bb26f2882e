import { type IncomingMessage, createServer } from "node:http";
import type { AddressInfo } from "node:net";

/**
 * A fetch-style handler (the MCP SDK v2's `createMcpHandler(...).fetch`) served on node:http at 127.0.0.1 on a
 * free port: the body is read whole, the answer streamed back (SSE included), and a client that goes away
 * aborts the request (MCP 2026-07-28: closing the stream cancels the request). `seen` gets each parsed body.
 */
export async function serveFetchOnNode(
  fetchHandler: (request: Request) => Promise<Response>,
  seen: (body: unknown, request: IncomingMessage) => void = () => {},
): Promise<{ url: string; close(): Promise<void> }> {
  const http = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    try {
      seen(JSON.parse(body.toString("utf8")), req);
    } catch {}
    const controller = new AbortController();
    res.on("close", () => controller.abort());
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value);
    const answer = await fetchHandler(
      new Request(`http://127.0.0.1${req.url}`, {
        method: req.method,
        headers,
        signal: controller.signal,
        ...(req.method === "POST" ? { body } : {}),
      }),
    );
    res.writeHead(answer.status, Object.fromEntries(answer.headers));
    if (!answer.body) return void res.end();
    const reader = answer.body.getReader();
    res.on("close", () => void reader.cancel().catch(() => {}));
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) break;
      res.write(value);
    }
    res.end();
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
}

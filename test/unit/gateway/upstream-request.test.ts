import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestUpstream } from "../../../core/gateway/upstream-request.ts";
import { UpstreamError } from "../../../core/providers/types.ts";

describe("requestUpstream (undici's dispatcher API) over real HTTP", () => {
  let server: Server;
  let base: string;
  let handler: (req: IncomingMessage, res: ServerResponse) => void = () => {};

  beforeAll(async () => {
    server = createServer((req, res) => handler(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const call = (path: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    requestUpstream(
      {
        url: `${base}${path}?api-version=1`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      },
      { timeoutMs: options.timeoutMs ?? 10_000, signal: options.signal ?? new AbortController().signal },
    );

  it("sends the request as given and reads the answer, its headers built only when asked", async () => {
    let seen: { url?: string; method?: string; body?: string } = {};
    handler = (req, res) => {
      let body = "";
      req.on("data", (chunk) => {
        body += chunk;
      });
      req.on("end", () => {
        seen = { url: req.url, method: req.method, body };
        res.setHeader("set-cookie", ["a=1", "b=2"]);
        res.writeHead(429, { "content-type": "application/json", "retry-after": "7" });
        res.end('{"error":{"message":"slow down"}}');
      });
    };
    const reply = await call("/v1/chat/completions");
    expect(reply.status).toBe(429);
    // A getter on the class, not an own property: see DispatcherReply's comment (young-generation promotion).
    expect(Object.getOwnPropertyDescriptor(reply, "headers")).toBeUndefined();
    expect(reply.headers.get("retry-after")).toBe("7");
    expect(reply.headers.getSetCookie()).toEqual(["a=1", "b=2"]);
    expect(reply.headers).toBe(reply.headers);
    expect(await reply.text()).toBe('{"error":{"message":"slow down"}}');
    expect(seen).toEqual({ url: "/v1/chat/completions?api-version=1", method: "POST", body: "{}" });
  });

  it("turns a body that stalls past the timeout into a 408, and a client that left into a 499", async () => {
    handler = (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write('{"partial":');
    };
    const slow = await call("/slow", { timeoutMs: 100 });
    const timedOut = await slow.text().catch((error: unknown) => error);
    expect(timedOut).toBeInstanceOf(UpstreamError);
    expect((timedOut as UpstreamError).status).toBe(408);

    const client = new AbortController();
    const left = await call("/left", { signal: client.signal });
    client.abort();
    const gone = await left.text().catch((error: unknown) => error);
    expect((gone as UpstreamError).status).toBe(499);
  });

  it("discards a body nobody reads without an uncaught error", async () => {
    handler = (_req, res) => {
      res.writeHead(302, { location: "http://169.254.169.254/" });
      res.write("moved");
    };
    const reply = await call("/redirect");
    expect(reply.status).toBe(302);
    expect(reply.headers.get("location")).toBe("http://169.254.169.254/");
    await reply.discard();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect((reply.body as unknown as { destroyed: boolean }).destroyed).toBe(true);
  });
});

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { requestUpstream } from "../../../core/providers/upstream/client.ts";
import { UpstreamError } from "../../../core/providers/types.ts";
import { parseTrustedHosts, type TrustedHosts } from "../../../core/security/custom-host.ts";

const loopbackTrusted = parseTrustedHosts(["127.0.0.1"]);

describe("requestUpstream (undici's public dispatcher API, guarded pool) over real HTTP", () => {
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

  const call = (path: string, options: { timeoutMs?: number; signal?: AbortSignal; trusted?: string[] } = {}) =>
    requestUpstream(
      {
        url: `${base}${path}?api-version=1`,
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      },
      {
        timeoutMs: options.timeoutMs ?? 10_000,
        signal: options.signal ?? new AbortController().signal,
        trusted: options.trusted ? parseTrustedHosts(options.trusted) : loopbackTrusted,
      },
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

describe("every upstream connection goes through the SSRF guard", () => {
  let server: Server;
  let port: number;
  let seen = 0;
  let connections = 0;

  beforeAll(async () => {
    server = createServer((_req, res) => {
      seen++;
      res.end("reached");
    });
    server.on("connection", () => connections++);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const call = (url: string, trusted: TrustedHosts) =>
    requestUpstream(
      { url, method: "GET", headers: {} },
      { timeoutMs: 5000, signal: new AbortController().signal, trusted },
    );

  it("refuses loopback, mapped and compatible IPv6 literals without TRUSTED_CUSTOM_HOSTS: nothing is sent", async () => {
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[::7f00:1]:${port}/`,
      `http://[::ffff:0:7f00:1]:${port}/`,
      "http://169.254.169.254/latest/meta-data/",
    ]) {
      const error = await call(url, parseTrustedHosts([])).catch((caught: unknown) => caught);
      expect(error, url).toMatchObject({ status: 400, code: "invalid_custom_host", transport: true });
    }
    expect(seen).toBe(0);
    expect(connections).toBe(0);
  });

  it("connects to a trusted address, through one keep-alive pool", async () => {
    const trusted = parseTrustedHosts(["127.0.0.1"]);
    const first = await call(`http://127.0.0.1:${port}/`, trusted);
    expect(await first.text()).toBe("reached");
    // The connection goes back to the pool once undici has parsed the whole answer (a turn after 'end').
    await new Promise((resolve) => setTimeout(resolve, 10));
    const second = await call(`http://127.0.0.1:${port}/`, trusted);
    expect(await second.text()).toBe("reached");
    expect(seen).toBe(2);
    expect(connections).toBe(1);
  });
});

import { withHeaders } from "../../../core/http/response-headers.ts";
import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { connect } from "node:net";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  SSE_HEADERS,
  type SseSource,
  sseBody,
  sseResponse,
  takeSseSource,
} from "../../../core/inference/gateway/stream/sse-source.ts";
import { writeSseResponse } from "../../../core/platform/local/response-writer.ts";
import { startServer } from "../../../core/platform/local/server.ts";

/** A source that answers next() with `produce(call index)`, counting calls; cancel() resolves a waiting next(). */
class FakeSource implements SseSource {
  nextCalls = 0;
  cancelCalls = 0;
  private onCancel: Array<() => void> = [];
  private readonly produce: (index: number, source: FakeSource) => Promise<string | null> | string | null;
  constructor(produce: (index: number, source: FakeSource) => Promise<string | null> | string | null) {
    this.produce = produce;
  }
  async next(): Promise<string | null> {
    return this.produce(this.nextCalls++, this);
  }
  async cancel(): Promise<void> {
    this.cancelCalls++;
    for (const resolve of this.onCancel.splice(0)) resolve();
  }
  /** A next() that waits until cancel() and then answers null. */
  untilCancelled(): Promise<null> {
    return new Promise((resolve) => this.onCancel.push(() => resolve(null)));
  }
}

const event = (text: string) => `data: ${text}\n\n`;
const servers: Server[] = [];
const closers: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  for (const close of closers.splice(0)) await close();
  vi.restoreAllMocks();
});

/** A real node:http server whose every request is answered by writeSseResponse from `makeSource()`. */
async function serve(makeSource: (res: ServerResponse) => SseSource) {
  const written: Array<Promise<void>> = [];
  const responses: ServerResponse[] = [];
  const server = createServer((_req, res) => {
    responses.push(res);
    const response = new Response(null, { status: 200, headers: { ...SSE_HEADERS, "x-test": "yes" } });
    written.push(writeSseResponse(res, response, makeSource(res)));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  return { port, url: `http://127.0.0.1:${port}`, written, responses };
}

interface RawResponse {
  head: string;
  chunks: Buffer[];
  /** The terminating zero-size chunk arrived. */
  complete: boolean;
}

/** A raw HTTP/1.1 client: the bytes exactly as they came, then the chunked framing checked by hand. */
function rawGet(port: number, options: { pauseMs?: number } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, "127.0.0.1");
    const received: Buffer[] = [];
    socket.on("connect", () => {
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
      if (options.pauseMs) {
        socket.pause();
        setTimeout(() => socket.resume(), options.pauseMs);
      }
    });
    const settle = (closed: boolean) => {
      try {
        const response = parseChunked(Buffer.concat(received));
        if (closed || response.complete) {
          socket.destroy();
          resolve(response);
        }
      } catch (error) {
        if (closed) reject(error);
      }
    };
    // The SSE headers ask for keep-alive: the response ends at its terminating chunk, not at the close.
    let tail = "";
    socket.on("data", (data) => {
      received.push(data);
      tail = (tail + data.subarray(-8).toString("latin1")).slice(-8);
      if (tail.endsWith("0\r\n\r\n")) settle(false);
    });
    socket.on("error", reject);
    socket.on("close", () => settle(true));
  });
}

function parseChunked(raw: Buffer): RawResponse {
  const headEnd = raw.indexOf("\r\n\r\n");
  if (headEnd < 0) throw new Error("no complete head");
  const head = raw.subarray(0, headEnd).toString("latin1");
  const chunks: Buffer[] = [];
  let at = headEnd + 4;
  for (;;) {
    const lineEnd = raw.indexOf("\r\n", at);
    if (lineEnd < 0) return { head, chunks, complete: false };
    const sizeText = raw.subarray(at, lineEnd).toString("latin1");
    if (!/^[0-9a-f]+$/i.test(sizeText)) throw new Error(`bad chunk size line ${JSON.stringify(sizeText)}`);
    const size = Number.parseInt(sizeText, 16);
    if (size === 0) {
      if (raw.subarray(lineEnd + 2).toString("latin1") !== "\r\n") throw new Error("bad terminator");
      return { head, chunks, complete: true };
    }
    const dataEnd = lineEnd + 2 + size;
    if (raw.length < dataEnd + 2) return { head, chunks, complete: false };
    chunks.push(raw.subarray(lineEnd + 2, dataEnd));
    if (raw.subarray(dataEnd, dataEnd + 2).toString("latin1") !== "\r\n") throw new Error("chunk not followed by CRLF");
    at = dataEnd + 2;
  }
}

const bodyOf = (response: RawResponse) => Buffer.concat(response.chunks).toString("utf8");

describe("writeSseResponse", () => {
  const texts = [event('{"n":1}'), event('{"n":2,"é":"ü"}'), event('{"n":3}') + event("[DONE]")];

  it("delivers every chunk intact to fetch, with the response's headers", async () => {
    const server = await serve(() => new FakeSource((i) => texts[i] ?? null));
    const response = await fetch(server.url);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe(SSE_HEADERS["content-type"]);
    expect(response.headers.get("x-test")).toBe("yes");
    expect(await response.text()).toBe(texts.join(""));
    await Promise.all(server.written);
  });

  it("sends a well-formed chunked response to a raw client, also when texts come slowly", async () => {
    const server = await serve(
      () =>
        new FakeSource(async (i) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          return texts[i] ?? null;
        }),
    );
    const raw = await rawGet(server.port);
    expect(raw.head).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(raw.head.toLowerCase()).toContain("transfer-encoding: chunked");
    expect(raw.complete).toBe(true);
    expect(raw.chunks.map((chunk) => chunk.toString("utf8"))).toEqual(texts);
  });

  it("writes what the source gives in one turn of the event loop at once, with the end if it ends then", async () => {
    const server = await serve((res) => {
      vi.spyOn(res, "flushHeaders");
      vi.spyOn(res, "write");
      vi.spyOn(res, "end");
      return new FakeSource((i) => texts[i] ?? null);
    });
    const raw = await rawGet(server.port);
    expect(raw.complete).toBe(true);
    expect(bodyOf(raw)).toBe(texts.join(""));
    const [res] = server.responses;
    expect(res!.flushHeaders).not.toHaveBeenCalled();
    expect(res!.write).not.toHaveBeenCalled();
    expect(vi.mocked(res!.end).mock.calls[0]?.[0]).toBe(texts.join(""));
  });

  it("writes texts that come in separate turns as they come, the head with the first", async () => {
    const later = <T>(value: T) => new Promise<T>((resolve) => setTimeout(() => resolve(value), 5));
    const server = await serve((res) => {
      vi.spyOn(res, "flushHeaders");
      vi.spyOn(res, "write");
      vi.spyOn(res, "end");
      return new FakeSource((i) => later(texts[i] ?? null));
    });
    const raw = await rawGet(server.port);
    expect(raw.complete).toBe(true);
    expect(bodyOf(raw)).toBe(texts.join(""));
    const [res] = server.responses;
    expect(res!.flushHeaders).not.toHaveBeenCalled();
    expect(vi.mocked(res!.write).mock.calls.map((call) => call[0])).toEqual(texts);
    expect(vi.mocked(res!.end).mock.calls[0]?.[0]).toBeUndefined();
  });

  it("writes at once past 64 KiB held, so an always-ready source cannot pile up a turn in memory", async () => {
    const piece = event("z".repeat(20 * 1024));
    const server = await serve((res) => {
      vi.spyOn(res, "write");
      return new FakeSource((i) => (i < 10 ? piece : null));
    });
    const raw = await rawGet(server.port);
    expect(bodyOf(raw)).toBe(piece.repeat(10));
    const writes = vi.mocked(server.responses[0]!.write).mock.calls.map((call) => String(call[0]).length);
    expect(writes.length).toBeGreaterThanOrEqual(2);
    for (const length of writes) expect(length).toBeLessThan(64 * 1024 + piece.length);
  });

  it("pauses reading the source while a slow client does not read, and delivers everything after", async () => {
    const chunk = (i: number) => event(`${String(i).padStart(4, "0")} ${"x".repeat(256 * 1024)}`);
    const total = 128; // 32 MiB: far more than the socket buffers hold
    let maxBuffered = 0;
    const sources: FakeSource[] = [];
    const server = await serve((res) => {
      const source = new FakeSource((i) => {
        maxBuffered = Math.max(maxBuffered, res.writableLength);
        return i < total ? chunk(i) : null;
      });
      sources.push(source);
      return source;
    });
    const done = rawGet(server.port, { pauseMs: 400 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const callsWhilePaused = sources[0]?.nextCalls ?? 0;
    const raw = await done;
    expect(raw.complete).toBe(true);
    const body = bodyOf(raw);
    expect(body.length).toBe(Array.from({ length: total }, (_, i) => chunk(i)).join("").length);
    expect(body).toBe(Array.from({ length: total }, (_, i) => chunk(i)).join(""));
    // Never more than a few chunks wait in the response's own buffer: the writer waited for 'drain'.
    expect(maxBuffered).toBeLessThan(3 * chunk(0).length);
    expect(callsWhilePaused).toBeLessThan(total);
  });

  it("cancels the source once when the client disconnects mid-stream", async () => {
    const sources: FakeSource[] = [];
    const server = await serve(() => {
      const source = new FakeSource((i, self) => (i === 0 ? event("first") : self.untilCancelled()));
      sources.push(source);
      return source;
    });
    await new Promise<void>((resolve, reject) => {
      const socket = connect(server.port, "127.0.0.1", () => {
        socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      });
      socket.on("error", reject);
      socket.on("data", (data) => {
        if (data.toString("utf8").includes("data: first")) {
          socket.destroy();
          resolve();
        }
      });
    });
    await Promise.all(server.written);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sources[0]!.cancelCalls).toBe(1);
    expect(sources[0]!.nextCalls).toBe(2);
  });

  it("cancels the source at once (no read, no hang) when the client left before the answer was ready", async () => {
    const source = new FakeSource(() => event("never"));
    let written: Promise<void> | undefined;
    const server = createServer((_req, res) => {
      // The answer is ready only after the client has gone (its 'close' fired before the writer listens).
      res.once("close", () => {
        written = writeSseResponse(res, new Response(null, { headers: SSE_HEADERS }), source);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const socket = connect((server.address() as AddressInfo).port, "127.0.0.1", () => {
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      setTimeout(() => socket.destroy(), 20);
    });
    await expect.poll(() => written !== undefined).toBe(true);
    await written;
    expect(source.cancelCalls).toBe(1);
    expect(source.nextCalls).toBe(0);
  });

  it("cancels the source once when a paused client disconnects while the writer waits for drain", async () => {
    const sources: FakeSource[] = [];
    const big = event("y".repeat(1024 * 1024));
    const server = await serve(() => {
      const source = new FakeSource(() => big);
      sources.push(source);
      return source;
    });
    const socket = connect(server.port, "127.0.0.1", () => {
      socket.write("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
      socket.pause();
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const callsBefore = sources[0]!.nextCalls;
    expect(callsBefore).toBeLessThan(64);
    socket.destroy();
    await Promise.all(server.written);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sources[0]!.cancelCalls).toBe(1);
    expect(sources[0]!.nextCalls).toBeLessThanOrEqual(callsBefore + 1);
  });

  it("ends the response properly with an error event after the first byte", async () => {
    const error = event(JSON.stringify({ error: { message: "upstream stalled", code: "request_timeout" } }));
    const server = await serve(
      () =>
        new FakeSource(async (i) => {
          if (i === 1) await new Promise((resolve) => setTimeout(resolve, 10));
          return [event("first"), error][i] ?? null;
        }),
    );
    const raw = await rawGet(server.port);
    expect(raw.complete).toBe(true);
    expect(bodyOf(raw)).toBe(event("first") + error);
  });

  it("closes the connection (no hang, cancel once) when the source throws after the first byte", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const sources: FakeSource[] = [];
    const server = await serve(() => {
      const source = new FakeSource(async (i) => {
        if (i === 0) return event("first");
        await new Promise((resolve) => setTimeout(resolve, 10));
        throw new Error("broken source");
      });
      sources.push(source);
      return source;
    });
    const raw = await rawGet(server.port);
    expect(raw.complete).toBe(false);
    expect(bodyOf(raw)).toBe(event("first"));
    await Promise.all(server.written);
    expect(sources[0]!.cancelCalls).toBe(1);
  });
});

describe("SSE source: one consumer", () => {
  it("does not pull the body before it is read", async () => {
    const source = new FakeSource(() => "x");
    const { body } = sseBody(source);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(source.nextCalls).toBe(0);
    void body;
  });

  it("refuses the direct handle once the body is read, and its cancel does nothing", async () => {
    const source = new FakeSource((i) => (i === 0 ? "a" : null));
    const { body, direct } = sseBody(source);
    expect(await new Response(body).text()).toBe("a");
    await expect(direct.next()).rejects.toThrow(/already read through its body/);
    await direct.cancel();
    expect(source.cancelCalls).toBe(0);
  });

  it("errors the body once the direct handle is used, and its cancel does nothing", async () => {
    const source = new FakeSource((i) => (i === 0 ? "a" : null));
    const { body, direct } = sseBody(source);
    expect(await direct.next()).toBe("a");
    await expect(new Response(body).text()).rejects.toThrow(/already read through directly/);
    const other = sseBody(new FakeSource(() => null));
    await other.direct.cancel();
    await other.body.cancel();
    expect(source.cancelCalls).toBe(0);
  });

  it("sseResponse carries the source and still has a readable body", async () => {
    const source = new FakeSource((i) => ["a", "b"][i] ?? null);
    const response = sseResponse(source);
    expect(takeSseSource(response)).toBeDefined();
    expect(takeSseSource(new Response("x"))).toBeUndefined();
    expect(await response.text()).toBe("ab");
  });
});

describe("the local server and SSE responses", () => {
  it("writes a response carrying a source from the source, with its headers; others as before", async () => {
    const sources: FakeSource[] = [];
    const answered: Response[] = [];
    const server = await startServer(
      async (request) => {
        if (new URL(request.url).pathname === "/json")
          return new Response('{"ok":true}', { headers: { "content-type": "application/json" } });
        const source = new FakeSource((i) => [event("one"), event("two")][i] ?? null);
        sources.push(source);
        const response = withHeaders(sseResponse(source, { "x-gateway-provider": "fake" }), {
          "x-gateway-trace-id": "trace-1",
        });
        answered.push(response);
        return response;
      },
      { port: 0, host: "127.0.0.1", pending: new Set() },
    );
    closers.push(() => server.close(100));
    const response = await fetch(`${server.url}/chat`);
    expect(response.headers.get("x-gateway-provider")).toBe("fake");
    expect(response.headers.get("x-gateway-trace-id")).toBe("trace-1");
    expect(response.headers.get("content-type")).toBe(SSE_HEADERS["content-type"]);
    expect(await response.text()).toBe(event("one") + event("two"));
    // It was read through the source: the body was never claimed (reading it now fails).
    await expect(answered[0]!.text()).rejects.toThrow(/already read through directly/);
    expect(sources[0]!.nextCalls).toBe(3);

    const json = await fetch(`${server.url}/json`);
    expect(await json.json()).toEqual({ ok: true });
  });
});

import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { PassThrough, Readable } from "node:stream";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createDecoder } from "../../../../../core/inference/gateway/stream/framing.ts";
import {
  type IdleTimeout,
  readUpstreamEvents,
  UpstreamBatchReader,
  UpstreamEventReader,
} from "../../../../../core/inference/gateway/stream/upstream-events.ts";
import { requestUpstream } from "../../../../../core/providers/upstream/client.ts";
import { withIdleTimeout } from "../../../../../core/providers/upstream/idle-timeout.ts";
import { type EventDecoder, eventBatches, SseDecoder } from "../../../../../core/providers/stream/sse.ts";
import type { StreamFraming, UpstreamEvent } from "../../../../../core/providers/types.ts";
import { parseTrustedHosts } from "../../../../../core/security/custom-host.ts";
import { encodeBedrockEvent } from "../../../../mocks/bedrock.ts";

/**
 * The event-driven reader of Node Readable bodies against the generic path it replaces (the Readable's async
 * iterator, eventBatches and withIdleTimeout): same batches, same errors, same idle timeout, plus backpressure.
 */

interface Drained {
  batches: UpstreamEvent[][];
  error?: unknown;
}

async function drain(iterator: AsyncIterator<UpstreamEvent[]>): Promise<Drained> {
  const batches: UpstreamEvent[][] = [];
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) return { batches };
      batches.push(next.value);
    }
  } catch (error) {
    return { batches, error };
  }
}

const noTimeout: IdleTimeout = { idleMs: 60_000, onTimeout: () => {} };

/** The generic stack over any AsyncIterable, as call-target used it before the reader. */
const genericPath = (body: AsyncIterable<Uint8Array>, decoder: EventDecoder, idle = noTimeout) =>
  withIdleTimeout(eventBatches(body, decoder), idle.idleMs, idle.onTimeout)[Symbol.asyncIterator]();

/** A Readable emitting exactly these chunks, one 'data' event each (as undici pushes network reads). */
const readableOf = (chunks: Uint8Array[]) =>
  Readable.from(
    chunks.map((chunk) => Buffer.from(chunk)),
    { objectMode: false },
  );

async function* iterableOf(chunks: Uint8Array[]): AsyncIterable<Uint8Array> {
  yield* chunks;
}

/** Seeded PRNG (mulberry32): failures reproduce. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A valid SSE body with comments, named events, multi-line data, multibyte text and mixed CRLF / LF / CR. */
function sseBody(rand: () => number, events: number): Uint8Array {
  const pick = <T>(items: T[]) => items[Math.floor(rand() * items.length)]!;
  const eol = () => pick(["\n", "\n", "\r\n", "\r"]);
  let text = "";
  for (let i = 0; i < events; i++) {
    if (rand() < 0.2) text += `: keep-alive${eol()}`;
    if (rand() < 0.3) text += `event: ${pick(["delta", "message_start", "ping"])}${eol()}`;
    if (rand() < 0.1) text += `id: ${i}${eol()}`;
    const lines = 1 + Math.floor(rand() * 3);
    for (let line = 0; line < lines; line++) {
      text += `data: ${JSON.stringify({ i, line, text: pick(["héllo", "日本語", "emoji 😀", "plain", ""]) })}${eol()}`;
    }
    text += eol();
  }
  return new TextEncoder().encode(text);
}

/** Cuts bytes at random places (possibly inside a CRLF or a multibyte character), with some empty chunks. */
function randomChunks(rand: () => number, bytes: Uint8Array, maxChunk: number): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const size = rand() < 0.05 ? 0 : 1 + Math.floor(rand() * maxChunk);
    chunks.push(bytes.slice(offset, offset + size));
    offset += size;
  }
  return chunks;
}

const bytes = (text: string) => new TextEncoder().encode(text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("UpstreamEventReader: same batches as the generic path", () => {
  it("for random chunkings of valid SSE bodies", async () => {
    for (let seed = 1; seed <= 200; seed++) {
      const rand = random(seed);
      const body = sseBody(rand, 1 + Math.floor(rand() * 30));
      const chunks = randomChunks(rand, body, pickMaxChunk(rand));
      const expected = await drain(genericPath(iterableOf(chunks), new SseDecoder()));
      const actual = await drain(new UpstreamEventReader(readableOf(chunks), new SseDecoder(), noTimeout));
      expect(actual, `seed ${seed}`).toEqual(expected);
      // Chunking changes batches, never events.
      const whole = await drain(genericPath(iterableOf([body]), new SseDecoder()));
      expect(actual.batches.flat(), `seed ${seed}`).toEqual(whole.batches.flat());
    }
  });

  it("for NDJSON and AWS event-stream bodies", async () => {
    const rand = random(7);
    const ndjson = bytes(
      Array.from({ length: 40 }, (_, i) => JSON.stringify({ i, text: "日本 😀" })).join(rand() < 0.5 ? "\n" : "\r\n"),
    );
    const aws = concat(
      Array.from({ length: 20 }, (_, i) => encodeBedrockEvent({ event: "contentBlockDelta", payload: { i } } as any)),
    );
    for (const [framing, body] of [
      ["ndjson", ndjson],
      ["aws-eventstream", aws],
    ] as Array<[StreamFraming, Uint8Array]>) {
      for (let round = 0; round < 20; round++) {
        const chunks = randomChunks(rand, body, 64);
        const expected = await drain(genericPath(iterableOf(chunks), await createDecoder(framing)));
        const reader = new UpstreamEventReader(readableOf(chunks), await createDecoder(framing), noTimeout);
        expect(await drain(reader)).toEqual(expected);
        expect(expected.batches.flat()).toHaveLength(framing === "ndjson" ? 40 : 20);
      }
    }
  });

  it("handles a CR at the end of a chunk whose LF comes in the next one", async () => {
    const chunks = ["data: a\r", "\n\r", "\ndata: b\r\n", "\r\n", "data: c\n\n"].map(bytes);
    const reader = new UpstreamEventReader(readableOf(chunks), new SseDecoder(), noTimeout);
    const drained = await drain(reader);
    expect(drained).toEqual(await drain(genericPath(iterableOf(chunks), new SseDecoder())));
    expect(drained.batches.flat().map((event) => event.data)).toEqual(["a", "b", "c"]);
  });

  it("delivers the last event of a body cut mid-frame, like the generic path", async () => {
    const chunks = [bytes("data: 1\n\ndata: 2")];
    const drained = await drain(new UpstreamEventReader(readableOf(chunks), new SseDecoder(), noTimeout));
    expect(drained).toEqual(await drain(genericPath(iterableOf(chunks), new SseDecoder())));
    expect(drained.batches).toEqual([[{ event: undefined, data: "1" }], [{ event: undefined, data: "2" }]]);
  });

  it("fails a binary stream cut inside a message after the events before it", async () => {
    const whole = encodeBedrockEvent({ event: "contentBlockDelta", payload: { i: 1 } } as any);
    const chunks = [whole, whole.slice(0, 10)];
    const expected = await drain(genericPath(iterableOf(chunks), await createDecoder("aws-eventstream")));
    const actual = await drain(
      new UpstreamEventReader(readableOf(chunks), await createDecoder("aws-eventstream"), noTimeout),
    );
    expect(actual.batches).toEqual(expected.batches);
    expect(actual.batches).toHaveLength(1);
    expect((actual.error as Error).message).toBe((expected.error as Error).message);
    expect((actual.error as Error).message).toMatch(/inside a message/);
  });

  it("fails on a decoder throw and destroys the body", async () => {
    const body = new PassThrough();
    const reader = new UpstreamEventReader(body, await createDecoder("aws-eventstream"), noTimeout);
    body.write(new Uint8Array([0, 0, 0, 5, 0, 0, 0, 0])); // a message length below the minimum
    const drained = await drain(reader);
    expect(drained.batches).toEqual([]);
    expect((drained.error as Error).message).toMatch(/invalid message length 5/);
    expect(body.destroyed).toBe(true);
  });
});

describe("UpstreamEventReader: body failures", () => {
  /** Runs the same scripted body through both paths. */
  async function both(script: (body: PassThrough) => void): Promise<[Drained, Drained]> {
    const run = async (read: (body: PassThrough) => AsyncIterator<UpstreamEvent[]>) => {
      const body = new PassThrough();
      body.on("error", () => {}); // as requestUpstream does
      const iterator = read(body);
      script(body);
      return drain(iterator);
    };
    return [
      await run((body) => genericPath(body, new SseDecoder())),
      await run((body) => new UpstreamEventReader(body, new SseDecoder(), noTimeout)),
    ];
  }

  it("rejects with the body's error after the batches before it", async () => {
    const [generic, reader] = await both((body) => {
      body.write("data: 1\n\n");
      setTimeout(() => body.destroy(new Error("socket hang up")), 10);
    });
    expect(reader).toEqual(generic);
    expect(reader.batches).toHaveLength(1);
    expect((reader.error as Error).message).toBe("socket hang up");
  });

  it("rejects a body closed before its end as a premature close", async () => {
    const [generic, reader] = await both((body) => {
      body.write("data: 1\n\n");
      setTimeout(() => body.destroy(), 10);
    });
    expect(reader.batches).toEqual(generic.batches);
    expect(reader.error).toMatchObject({ message: "Premature close", code: "ERR_STREAM_PREMATURE_CLOSE" });
    expect(generic.error).toMatchObject({ message: "Premature close", code: "ERR_STREAM_PREMATURE_CLOSE" });
  });

  it("fails at once on a body that already failed", async () => {
    const body = new PassThrough();
    body.on("error", () => {});
    body.destroy(new Error("gone"));
    await new Promise((resolve) => setImmediate(resolve));
    const reader = new UpstreamEventReader(body, new SseDecoder(), noTimeout);
    await expect(reader.next()).rejects.toThrow("gone");
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });
});

describe("UpstreamEventReader: idle timeout", () => {
  afterEach(() => void vi.useRealTimers());

  it("fails with a 408 and calls onTimeout when no batch comes while the consumer waits", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const body = new PassThrough();
    const onTimeout = vi.fn();
    const reader = new UpstreamEventReader(body, new SseDecoder(), { idleMs: 1000, onTimeout });
    body.write("data: 1\n\n");
    expect((await reader.next()).value).toHaveLength(1);
    const pending = reader.next();
    const settled = vi.fn();
    pending.then(settled, settled);
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    await expect(pending).rejects.toMatchObject({ status: 408, code: "request_timeout" });
    expect(onTimeout).toHaveBeenCalledTimes(1);
    expect(body.destroyed).toBe(true);
    expect(vi.getTimerCount()).toBe(0);
  });

  it("counts only the time the consumer waits, like withIdleTimeout", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    for (const path of ["generic", "reader"] as const) {
      const body = new PassThrough();
      const onTimeout = vi.fn();
      const idle = { idleMs: 1000, onTimeout };
      const iterator =
        path === "reader"
          ? new UpstreamEventReader(body, new SseDecoder(), idle)
          : genericPath(body, new SseDecoder(), idle);
      // The consumer waits first (the timer runs), then the first batch comes.
      const first = iterator.next();
      await vi.advanceTimersByTimeAsync(500);
      body.write("data: 1\n\n");
      expect((await first).done).toBe(false);
      // A slow consumer: five idle periods between reads, while the upstream is silent.
      await vi.advanceTimersByTimeAsync(5000);
      const pending = iterator.next();
      await vi.advanceTimersByTimeAsync(900);
      body.end("data: 2\n\n");
      expect((await pending).value).toEqual([{ event: undefined, data: "2" }]);
      expect((await iterator.next()).done).toBe(true);
      expect(onTimeout, path).not.toHaveBeenCalled();
      expect(vi.getTimerCount(), path).toBe(0);
    }
  });

  it("rejects with the timeout even when onTimeout makes the body fail", async () => {
    const body = new PassThrough();
    body.on("error", () => {});
    const reader = new UpstreamEventReader(body, new SseDecoder(), {
      idleMs: 20,
      onTimeout: () => body.destroy(new Error("aborted")),
    });
    await expect(reader.next()).rejects.toMatchObject({ status: 408 });
  });
});

describe("UpstreamEventReader: return()", () => {
  afterEach(() => void vi.useRealTimers());

  it("mid-stream stops listening, clears the timer, destroys the body and fails a pending read as cut off", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const body = new PassThrough();
    const onTimeout = vi.fn();
    const reader = new UpstreamEventReader(body, new SseDecoder(), { idleMs: 1000, onTimeout });
    body.write("data: 1\n\n");
    await reader.next();
    const pending = reader.next();
    expect(vi.getTimerCount()).toBe(1);
    await expect(reader.return()).resolves.toEqual({ done: true, value: undefined });
    // Not an end: the provider did not finish, the consumer gave up.
    await expect(pending).rejects.toThrow("Premature close");
    expect(vi.getTimerCount()).toBe(0);
    expect(body.destroyed).toBe(true);
    expect(body.listenerCount("data")).toBe(0);
    expect(body.listenerCount("end")).toBe(0);
    await vi.advanceTimersByTimeAsync(5000);
    expect(onTimeout).not.toHaveBeenCalled();
    await expect(reader.next()).resolves.toEqual({ done: true, value: undefined });
  });
});

describe("UpstreamEventReader: backpressure", () => {
  it("pauses the body while batches wait unread and loses nothing", async () => {
    const body = new PassThrough({ highWaterMark: 1024 });
    const reader = new UpstreamEventReader(body, new SseDecoder(), noTimeout);
    let written = 0;
    // Write until the body pushes back: without the pause it would take all of it.
    for (; written < 10_000; written++) {
      if (!body.write(`data: ${written}\n\n`)) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    expect(written).toBeLessThan(10_000);
    expect(body.isPaused()).toBe(true);
    const rest = (async () => {
      for (let i = written + 1; i < 1000; i++) {
        if (!body.write(`data: ${i}\n\n`)) await new Promise((resolve) => body.once("drain", resolve));
      }
      body.end();
    })();
    const { batches, error } = await drain(reader);
    await rest;
    expect(error).toBeUndefined();
    expect(batches.flat().map((event) => Number(event.data))).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });
});

describe("readUpstreamEvents", () => {
  it("reads Node Readables with the event reader and other bodies through the generic path", async () => {
    const chunks = ["data: 1\n\n", "data: 2\n\n"].map(bytes);
    const fast = await readUpstreamEvents("sse", readableOf(chunks), noTimeout);
    expect(fast).toBeInstanceOf(UpstreamBatchReader);
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks) controller.enqueue(chunk);
        controller.close();
      },
    }) as unknown as AsyncIterable<Uint8Array>;
    const generic = await readUpstreamEvents("sse", web, noTimeout);
    expect(generic).not.toBeInstanceOf(UpstreamBatchReader);
    expect(await drain(fast)).toEqual(await drain(generic));
  });
});

describe("UpstreamEventReader over a real HTTP upstream", () => {
  let server: Server;
  let url: string;
  let handler: (res: ServerResponse) => void = () => {};

  beforeAll(async () => {
    server = createServer((_req, res) => handler(res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`;
  });
  afterAll(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const call = () =>
    requestUpstream(
      { url, method: "POST", headers: { "content-type": "application/json" }, body: "{}" },
      { timeoutMs: 10_000, signal: new AbortController().signal, trusted: parseTrustedHosts(["127.0.0.1"]) },
    );

  /** The events (batches depend on network timing) and error of one call through either path. */
  async function viaBoth(): Promise<Array<{ events: UpstreamEvent[]; error?: string }>> {
    const results = [];
    for (const path of ["generic", "reader"]) {
      const upstream = await call();
      upstream.clearTimer();
      const idle = { idleMs: 10_000, onTimeout: () => upstream.abort() };
      const iterator =
        path === "reader"
          ? await readUpstreamEvents("sse", upstream.body, idle)
          : genericPath(upstream.body, new SseDecoder(), idle);
      if (path === "reader") expect(iterator).toBeInstanceOf(UpstreamBatchReader);
      const { batches, error } = await drain(iterator);
      upstream.release();
      results.push({ events: batches.flat(), error: error === undefined ? undefined : String(error) });
    }
    return results;
  }

  it("reads a stream written in random pieces like the generic path", async () => {
    const rand = random(42);
    const body = sseBody(rand, 50);
    handler = async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (const chunk of randomChunks(rand, body, 200)) {
        res.write(chunk);
        if (rand() < 0.3) await sleep(1);
      }
      res.end();
    };
    const [generic, reader] = await viaBoth();
    expect(reader).toEqual(generic);
    expect(reader!.events.length).toBeGreaterThan(40);
    expect(reader!.error).toBeUndefined();
  });

  it("fails like the generic path when the provider drops the connection mid-stream", async () => {
    handler = async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("data: 1\n\n");
      await sleep(20);
      res.socket?.destroy();
    };
    const [generic, reader] = await viaBoth();
    expect(reader).toEqual(generic);
    expect(reader!.events).toHaveLength(1);
    expect(reader!.error).toBeDefined();
  });

  it("stops reading the socket while the consumer does not read, and loses nothing", async () => {
    const total = 20_000;
    const event = (i: number) => `data: ${JSON.stringify({ i, pad: "x".repeat(500) })}\n\n`;
    let written = 0;
    let blocked = false;
    handler = async (res) => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      for (; written < total; written++) {
        if (!res.write(event(written))) {
          blocked = true;
          await new Promise((resolve) => res.once("drain", resolve));
          blocked = false;
        }
      }
      res.end();
    };
    const upstream = await call();
    upstream.clearTimer();
    const reader = await readUpstreamEvents("sse", upstream.body, noTimeout);
    await reader.next();
    // A slow client: the upstream (10 MB) must stall on the socket instead of landing in the gateway's memory.
    await sleep(300);
    expect(blocked).toBe(true);
    expect(written).toBeLessThan(total);
    let count = 1;
    let last = -1;
    for (;;) {
      const next = await reader.next();
      if (next.done) break;
      for (const item of next.value) {
        last = JSON.parse(item.data).i;
        count++;
      }
    }
    upstream.release();
    expect(count).toBe(total);
    expect(last).toBe(total - 1);
  });
});

function pickMaxChunk(rand: () => number): number {
  return [1, 3, 16, 64, 4096][Math.floor(rand() * 5)]!;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

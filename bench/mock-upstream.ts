import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { parseFlags, printReady } from "./lib/cli.ts";

/**
 * A fast mock of OpenAI's chat completions endpoint, the upstream of every benchmark.
 *
 * - `POST .../chat/completions` answers a fixed ~600-byte `chat.completion` (with usage), or, when the body has
 *   `"stream": true`, an SSE stream of 20 content chunks and `data: [DONE]`, shaped by `stream_options` as
 *   OpenAI's are: with `include_usage`, `"usage": null` on every chunk and a usage-only chunk at the end; unless
 *   `include_obfuscation` is false, an `obfuscation` field of padding on every chunk.
 * - Fast mode writes the whole stream in one write: what a proxy pays per request, not per network round trip.
 * - Paced mode, for any path under `/paced/` (e.g. a custom host `http://127.0.0.1:N/paced/v1`): the chunks are
 *   written `pacedGapMs` apart, so a client can tell a proxy that streams (first byte after one gap) from one
 *   that buffers (first byte after the whole stream).
 * - Anything else: 404 in OpenAI's error shape.
 *
 * Run as a process (`node bench/mock-upstream.ts --port=0 --paced-gap-ms=1`): prints one JSON line
 * `{"ready":true,"url":...}` on stdout. Or start in-process with `startMockUpstream`.
 */

import { MOCK_MODEL } from "./lib/mock-model.ts";

export { MOCK_MODEL };
export const STREAM_CONTENT_CHUNKS = 20;

const CREATED = 1_750_000_000;
const ID = "chatcmpl-BenchMock0123456789abcdefXYZ";

function completionBody(): Buffer {
  const body = {
    id: ID,
    object: "chat.completion",
    created: CREATED,
    model: "gpt-4o-mini-2024-07-18",
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: "A fixed answer about as long as a short reply from a model, and cheap to send.",
          refusal: null,
          annotations: [],
        },
        logprobs: null,
        finish_reason: "stop",
      },
    ],
    usage: {
      prompt_tokens: 19,
      completion_tokens: 33,
      total_tokens: 52,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
    },
    service_tier: "default",
    system_fingerprint: "fp_bench00000",
  };
  return Buffer.from(JSON.stringify(body));
}

/** What a stream's chunks carry besides the content, as OpenAI decides it from the request's `stream_options`. */
interface StreamShape {
  /** `include_usage`: every chunk has `"usage": null`, and a usage-only chunk comes before `[DONE]`. */
  usage: boolean;
  /** `include_obfuscation` (on unless the request turns it off): an `obfuscation` field of random characters. */
  obfuscation: boolean;
}

/** Fixed stand-ins for OpenAI's random padding, of varying length like the real ones (the mock must be cheap). */
const OBFUSCATION = ["xQ", "k3Vr9", "Zp0", "mT7bLq2w", "a", "Hc81nUe", "Yw4", "pR2sK9vXj", "d5", "GqL0"];

function chunk(
  shape: StreamShape,
  index: number,
  fields: { choices: unknown[]; usage?: unknown; service_tier?: string; system_fingerprint?: string },
): string {
  return JSON.stringify({
    id: ID,
    object: "chat.completion.chunk",
    created: CREATED,
    model: "gpt-4o-mini-2024-07-18",
    service_tier: fields.service_tier,
    system_fingerprint: fields.system_fingerprint,
    choices: fields.choices,
    ...(shape.usage ? { usage: fields.usage ?? null } : {}),
    ...(shape.obfuscation ? { obfuscation: OBFUSCATION[index % OBFUSCATION.length] } : {}),
  });
}

/**
 * One stream as OpenAI's chat completions send it (per its API reference): 20 content chunks; with
 * `include_usage`, `"usage": null` on each of them and a last chunk with no choices and the usage; with
 * obfuscation, an `obfuscation` field on every chunk; then `data: [DONE]`.
 */
function streamEvents(shape: StreamShape): Buffer[] {
  const events: Buffer[] = [];
  for (let i = 0; i < STREAM_CONTENT_CHUNKS; i++) {
    const delta: Record<string, unknown> =
      i === 0 ? { role: "assistant", content: "", refusal: null } : { content: ` word${i}` };
    const finish = i === STREAM_CONTENT_CHUNKS - 1 ? "stop" : null;
    const text = chunk(shape, i, {
      service_tier: "default",
      system_fingerprint: "fp_bench00000",
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    });
    events.push(Buffer.from(`data: ${text}\n\n`));
  }
  if (shape.usage) {
    const usage = { prompt_tokens: 19, completion_tokens: 19, total_tokens: 38 };
    events.push(Buffer.from(`data: ${chunk(shape, STREAM_CONTENT_CHUNKS, { choices: [], usage })}\n\n`));
  }
  events.push(Buffer.from("data: [DONE]\n\n"));
  return events;
}

export const COMPLETION = completionBody();
/** The four streams, by `usage` and `obfuscation` (index: usage * 2 + obfuscation), as events and as one Buffer. */
const STREAMS = [false, true].flatMap((usage) =>
  [false, true].map((obfuscation) => {
    const events = streamEvents({ usage, obfuscation });
    // Fast mode sends each stream in one write (one Buffer: corking + many writes + end() dropped chunks on Node 24).
    return { events, whole: Buffer.concat(events) };
  }),
);
const NOT_FOUND = Buffer.from(
  JSON.stringify({ error: { message: "not found", type: "invalid_request_error", code: null } }),
);

const JSON_HEADERS = { "content-type": "application/json", "content-length": String(COMPLETION.length) };
const SSE_HEADERS = { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache" };

export interface MockUpstream {
  url: string;
  server: Server;
  requests(): number;
  close(): Promise<void>;
}

/** `/paced/...` paces a stream's chunks `pacedGapMs` apart; `/paced-50/...` 50 ms apart (the burst of new streams). */
const PACED_PATH = /^\/paced(?:-(\d+))?\//;

export interface MockOptions {
  port?: number;
  host?: string;
  /** Gap between chunks on `/paced/` paths, in ms. */
  pacedGapMs?: number;
}

export function createMockHandler(options: MockOptions = {}): {
  handle: (req: IncomingMessage, res: ServerResponse) => void;
  count: () => number;
} {
  const gap = options.pacedGapMs ?? 1;
  let count = 0;
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (data: Buffer) => chunks.push(data));
    req.on("end", () => {
      count++;
      const url = req.url ?? "/";
      if (req.method !== "POST" || !url.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" }).end(NOT_FOUND);
        return;
      }
      const body = chunks.length === 1 ? chunks[0]!.toString("latin1") : Buffer.concat(chunks).toString("latin1");
      if (!/"stream"\s*:\s*true/.test(body)) {
        res.writeHead(200, JSON_HEADERS).end(COMPLETION);
        return;
      }
      const usage = /"include_usage"\s*:\s*true/.test(body);
      const obfuscation = !/"include_obfuscation"\s*:\s*false/.test(body);
      const stream = STREAMS[Number(usage) * 2 + Number(obfuscation)]!;
      res.writeHead(200, SSE_HEADERS);
      const paced = PACED_PATH.exec(url);
      if (!paced) {
        res.end(stream.whole);
        return;
      }
      const pause = paced[1] ? Number(paced[1]) : gap;
      const { events } = stream;
      let i = 0;
      const next = () => {
        if (res.destroyed) return;
        res.write(events[i++]!);
        if (i === events.length) res.end();
        else setTimeout(next, pause);
      };
      next();
    });
  };
  return { handle, count: () => count };
}

export async function startMockUpstream(options: MockOptions = {}): Promise<MockUpstream> {
  const { handle, count } = createMockHandler(options);
  const server = createServer({ keepAlive: true, keepAliveTimeout: 65_000, requestTimeout: 0 }, handle);
  server.headersTimeout = 66_000;
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, options.host ?? "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    requests: count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  const mock = await startMockUpstream({
    port: Number(flags.port ?? 0),
    pacedGapMs: Number(flags["paced-gap-ms"] ?? 1),
  });
  printReady({ url: mock.url, pid: process.pid });
  process.on("SIGTERM", () => mock.close().then(() => process.exit(0)));
  process.on("SIGINT", () => mock.close().then(() => process.exit(0)));
}

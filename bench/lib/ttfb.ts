import { Agent, request } from "node:http";
import { percentile } from "./stats.ts";

/**
 * Time to first byte of streamed answers, which wrk cannot tell (it times whole responses): a small client on
 * node:http that sends `requests` requests with `concurrency` in flight and notes, for each, when the first
 * body chunk and the last byte arrived. The first `warmup` requests are not counted.
 */

export interface TtfbResult {
  requests: number;
  concurrency: number;
  /** ms from sending the request to the first body chunk. */
  ttfbP50: number;
  ttfbP99: number;
  /** ms to the end of the stream. */
  ttlbP50: number;
  ttlbP99: number;
  errors: number;
}

export interface Sample {
  ttfb: number;
  ttlb: number;
  ok: boolean;
}

/**
 * One streamed request: when its first body chunk and its last byte arrived, and whether it ended well (200,
 * and `done` true of its last 64 bytes: OpenAI's `[DONE]` by default).
 */
export function timeStream(
  url: URL,
  agent: Agent,
  headers: Record<string, string>,
  body: string,
  done: (tail: string) => boolean = (tail) => tail.includes("[DONE]"),
): Promise<Sample> {
  return new Promise((resolve) => {
    const start = performance.now();
    let first = 0;
    let tail = "";
    const failed = () => resolve({ ttfb: 0, ttlb: 0, ok: false });
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        agent,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.on("data", (chunk: Buffer) => {
          if (first === 0) first = performance.now();
          tail = (tail + chunk.toString("latin1")).slice(-64);
        });
        res.on("end", () =>
          resolve({ ttfb: first - start, ttlb: performance.now() - start, ok: res.statusCode === 200 && done(tail) }),
        );
        res.on("error", failed);
      },
    );
    req.on("error", failed);
    req.end(body);
  });
}

export async function measureTtfb(options: {
  url: string;
  headers: Record<string, string>;
  body: string;
  requests: number;
  concurrency: number;
  warmup?: number;
}): Promise<TtfbResult> {
  const url = new URL(options.url);
  const agent = new Agent({ keepAlive: true, maxSockets: options.concurrency });
  const warmup = options.warmup ?? Math.max(10, options.concurrency * 5);
  const samples: Sample[] = [];
  let issued = 0;
  const total = warmup + options.requests;
  const worker = async () => {
    while (issued < total) {
      const index = issued++;
      const sample = await timeStream(url, agent, options.headers, options.body);
      if (index >= warmup) samples.push(sample);
    }
  };
  await Promise.all(Array.from({ length: options.concurrency }, worker));
  agent.destroy();
  const good = samples.filter((sample) => sample.ok);
  return {
    requests: samples.length,
    concurrency: options.concurrency,
    ttfbP50: percentile(
      good.map((s) => s.ttfb),
      50,
    ),
    ttfbP99: percentile(
      good.map((s) => s.ttfb),
      99,
    ),
    ttlbP50: percentile(
      good.map((s) => s.ttlb),
      50,
    ),
    ttlbP99: percentile(
      good.map((s) => s.ttlb),
      99,
    ),
    errors: samples.length - good.length,
  };
}

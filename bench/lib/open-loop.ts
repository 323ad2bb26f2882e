import { execFile } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { benchNode } from "./proc.ts";
import { percentile } from "./stats.ts";

/**
 * Open-loop load at a fixed offered rate, the way tail latency must be measured: request i is due at
 * start + i / rate whether or not earlier ones have answered, and its latency counts from when it was due,
 * not from when a connection was free (a closed loop like wrk at saturation measures queueing instead, and
 * hides the stalls it causes: "coordinated omission"). Connections are opened as needed up to `maxInFlight`;
 * a request due while that many are in flight is counted as dropped.
 *
 * Runs as its own process (like wrk), so the client's CPU is not the bench orchestrator's.
 */

export interface OpenLoopOptions {
  url: string;
  body: string;
  headers: Record<string, string>;
  /** Requests per second offered. */
  rate: number;
  durationS: number;
  /** Seconds offered before the measured part (opens the connections, warms the path). */
  warmupS?: number;
  maxInFlight?: number;
  timeoutS?: number;
}

export interface OpenLoopResult {
  rate: number;
  offered: number;
  completed: number;
  /** Non-2xx answers, socket errors and timeouts. */
  errors: number;
  /** Due while `maxInFlight` requests were already waiting: the target could not keep up. */
  dropped: number;
  achievedRps: number;
  /** Latency from the moment each request was due to its last byte, ms. */
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

/** Runs the open-loop client in a child process on the bench's Node and answers its summary. */
export function runOpenLoop(
  options: OpenLoopOptions,
  onStart?: (pid: number | undefined) => void,
): Promise<OpenLoopResult> {
  return new Promise((resolve, reject) => {
    const child = execFile(
      benchNode(),
      [fileURLToPath(import.meta.url), JSON.stringify(options)],
      { maxBuffer: 4 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) return reject(new Error(`open-loop client failed: ${error.message}\n${stderr}`));
        const line = stdout.split("\n").find((candidate) => candidate.startsWith('{"openLoop":true'));
        if (!line) return reject(new Error(`open-loop client printed no summary: ${stderr.trim()}`));
        const { openLoop: _, ...result } = JSON.parse(line);
        resolve(result as OpenLoopResult);
      },
    );
    onStart?.(child.pid);
  });
}

interface Sample {
  latencyMs: number;
  ok: boolean;
  measured: boolean;
}

/** The client itself (the child process). */
async function drive(options: OpenLoopOptions): Promise<OpenLoopResult> {
  const url = new URL(options.url);
  const maxInFlight = options.maxInFlight ?? 512;
  const agent = new Agent({ keepAlive: true, maxSockets: maxInFlight, maxFreeSockets: maxInFlight });
  const headers = { ...options.headers, "content-length": String(Buffer.byteLength(options.body)) };
  const warmupMs = (options.warmupS ?? 1) * 1000;
  const totalMs = warmupMs + options.durationS * 1000;
  const intervalMs = 1000 / options.rate;
  const samples: Sample[] = [];
  let inFlight = 0;
  let dropped = 0;
  let offered = 0;

  const send = (dueAt: number, measured: boolean) =>
    new Promise<void>((resolve) => {
      inFlight++;
      const finish = (ok: boolean) => {
        inFlight--;
        samples.push({ latencyMs: performance.now() - dueAt, ok, measured });
        resolve();
      };
      const req = request(
        { hostname: url.hostname, port: url.port, path: url.pathname, method: "POST", agent, headers },
        (res) => {
          res.on("data", () => {});
          res.on("end", () => finish((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300));
          res.on("error", () => finish(false));
        },
      );
      req.setTimeout((options.timeoutS ?? 10) * 1000, () => req.destroy(new Error("timeout")));
      req.on("error", () => finish(false));
      req.end(options.body);
    });

  const pending: Promise<void>[] = [];
  const start = performance.now();
  let next = 0;
  await new Promise<void>((done) => {
    // A 1 ms tick sends every request that is due: the schedule, not the answers, sets the pace.
    const tick = setInterval(() => {
      const now = performance.now();
      while (start + next * intervalMs <= now && next * intervalMs < totalMs) {
        const dueAt = start + next * intervalMs;
        const measured = next * intervalMs >= warmupMs;
        next++;
        if (measured) offered++;
        if (inFlight >= maxInFlight) {
          if (measured) dropped++;
          continue;
        }
        pending.push(send(dueAt, measured));
      }
      if (next * intervalMs >= totalMs) {
        clearInterval(tick);
        done();
      }
    }, 1);
  });
  await Promise.all(pending);
  agent.destroy();
  const measured = samples.filter((sample) => sample.measured);
  const latencies = measured.filter((sample) => sample.ok).map((sample) => sample.latencyMs);
  return {
    rate: options.rate,
    offered,
    completed: latencies.length,
    errors: measured.length - latencies.length,
    dropped,
    achievedRps: latencies.length / options.durationS,
    p50: percentile(latencies, 50),
    p90: percentile(latencies, 90),
    p99: percentile(latencies, 99),
    max: latencies.length ? Math.max(...latencies) : Number.NaN,
  };
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const result = await drive(JSON.parse(process.argv[2]!) as OpenLoopOptions);
  process.stdout.write(`${JSON.stringify({ openLoop: true, ...result })}\n`);
}

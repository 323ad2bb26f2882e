import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The load generator: wrk (one process, outside the servers under test), driven by a Lua script that sets
 * the request and prints a JSON summary (requests, errors, latency percentiles) when the run ends.
 */

export interface WrkResult {
  requests: number;
  durationS: number;
  rps: number;
  /** Latency percentiles of whole responses, ms (wrk measures until the last byte). */
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  /** Connect/read/write/timeout errors and non-2xx/3xx answers. */
  errors: number;
  errorDetail: Record<string, number>;
  /** The wrk process (for CPU accounting). */
  pid?: number;
}

export function wrkAvailable(): boolean {
  try {
    execFileSync("wrk", ["--version"], { stdio: "ignore" });
    return true;
  } catch (error) {
    // wrk --version exits 1 after printing its banner: only "not found" means missing.
    return (error as NodeJS.ErrnoException).code !== "ENOENT";
  }
}

export const WRK_INSTALL_HINT =
  "wrk is not installed. On Debian/Ubuntu: `apt-get update && apt-get install -y wrk` (macOS: `brew install wrk`).";

const luaString = (value: string) => `[==[${value}]==]`;

/** Replaced, in each request's body, by a value no other request of any run has (see runWrk's `uniqueBodies`). */
export const UNIQUE_MARKER = "__BENCH_UNIQUE__";

/**
 * Makes every request's body unique: the marker becomes a random per-run prefix (from /dev/urandom, so two runs
 * in the same second differ) and a counter. For measuring what a cache miss costs.
 */
const uniqueBodyLua = [
  `local urandom = io.open("/dev/urandom", "rb")`,
  `local seed = urandom:read(4)`,
  `urandom:close()`,
  `local prefix = string.format("%02x%02x%02x%02x", seed:byte(1, 4))`,
  `local counter = 0`,
  `request = function()`,
  `  counter = counter + 1`,
  `  local body = string.gsub(wrk.body, "${UNIQUE_MARKER}", prefix .. "-" .. counter)`,
  `  return wrk.format(nil, nil, nil, body)`,
  `end`,
];

function luaScript(body: string, headers: Record<string, string>, uniqueBodies = false): string {
  return [
    `wrk.method = "POST"`,
    `wrk.body = ${luaString(body)}`,
    ...(uniqueBodies ? uniqueBodyLua : []),
    // The spaces matter: `[[` would open a Lua long string.
    ...Object.entries(headers).map(([name, value]) => `wrk.headers[ ${luaString(name)} ] = ${luaString(value)}`),
    `done = function(summary, latency, requests)`,
    `  local e = summary.errors`,
    `  io.write(string.format('{"wrk":true,"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%d,"p90":%d,"p99":%d,"max":%d,"mean":%f}\\n',`,
    `    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,`,
    `    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))`,
    `end`,
  ].join("\n");
}

export async function runWrk(options: {
  url: string;
  body: string;
  headers: Record<string, string>;
  connections: number;
  durationS: number;
  threads?: number;
  timeoutS?: number;
  /** Replace UNIQUE_MARKER in the body with a value unique to each request. */
  uniqueBodies?: boolean;
  onStart?: (pid: number | undefined) => void;
}): Promise<WrkResult> {
  const dir = mkdtempSync(join(tmpdir(), "bench-wrk-"));
  const script = join(dir, "request.lua");
  writeFileSync(script, luaScript(options.body, options.headers, options.uniqueBodies));
  const threads = Math.max(1, Math.min(options.threads ?? 1, options.connections));
  const args = [
    `-t${threads}`,
    `-c${options.connections}`,
    `-d${options.durationS}s`,
    `--timeout`,
    `${options.timeoutS ?? 10}s`,
    "-s",
    script,
    options.url,
  ];
  try {
    let pid: number | undefined;
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      const child = execFile("wrk", args, { maxBuffer: 4 * 1024 * 1024 }, (error, out, err) => {
        if (error) reject(new Error(`wrk failed: ${error.message}\n${err}`));
        else resolve({ stdout: out, stderr: err });
      });
      pid = child.pid;
      options.onStart?.(child.pid);
    });
    const line = stdout.split("\n").find((candidate) => candidate.startsWith('{"wrk":true'));
    if (!line) throw new Error(`wrk printed no summary: ${stderr.trim()} ${stdout.trim()}`.replace(/\s+/g, " "));
    const raw = JSON.parse(line);
    const durationS = raw.duration_us / 1e6;
    const errorDetail = {
      connect: raw.connect,
      read: raw.read,
      write: raw.write,
      status: raw.status,
      timeout: raw.timeout,
    };
    return {
      requests: raw.requests,
      durationS,
      rps: raw.requests / durationS,
      p50: raw.p50 / 1000,
      p90: raw.p90 / 1000,
      p99: raw.p99 / 1000,
      max: raw.max / 1000,
      mean: raw.mean / 1000,
      errors: Object.values(errorDetail).reduce((a: number, b) => a + (b as number), 0),
      errorDetail,
      pid,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpus, loadavg, totalmem, tmpdir } from "node:os";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { awsRequestsOf, costPerMillion, DEFAULT_COST_OPTIONS, formatCost, standardScenarios } from "./aws-cost.ts";
import { type BundleReport, formatBundles, measureBundles, type PackageImport } from "./bundle-size.ts";
import { buildLocal, scratchBuildDir } from "../scripts/build.ts";
import { BENCH_PROVIDER_KEY, benchRequest } from "./gateway-server.ts";
import { flagOn, parseFlags } from "./lib/cli.ts";
import {
  BENCH_DIR,
  benchNode,
  nodeVersion,
  processCpuSeconds,
  processMemory,
  REPO_DIR,
  type ServerProcess,
  spawnServer,
  startBackgroundCpu,
} from "./lib/proc.ts";
import { formatProfile, latestProfile, type ProfileSummary, summariseProfile } from "./lib/profile.ts";
import type { StoreOpCounts } from "./lib/store-counter.ts";
import { startMariaDb } from "../scripts/mariadb.ts";
import { npmStartCommand } from "../scripts/start-command.ts";
import { measureTtfb, type TtfbResult } from "./lib/ttfb.ts";
import { type BurstResult, measureBurst } from "./lib/burst.ts";
import { buildBaseline, type Build } from "./lib/baseline.ts";
import {
  checkFormatAnswer,
  formatBody,
  formatPath,
  type FormatTarget,
  TRANSLATED_PROVIDER,
} from "./lib/format-requests.ts";
import { type OpenLoopResult, runOpenLoop } from "./lib/open-loop.ts";
import { runWrk, UNIQUE_MARKER, type WrkResult, WRK_INSTALL_HINT, wrkAvailable } from "./lib/wrk.ts";
import { portkeyInstalled, portkeyVersion, startPortkey } from "./portkey.ts";
import { formatStoreOps, measureStoreOps, type PerRequest, type StoreOpsResult } from "./store-ops.ts";

/**
 * `npm run bench`: every benchmark in one run on 127.0.0.1, one table, one JSON file under bench/results/.
 * See bench/README.md for what each number means. Benchmarks never fail on a timing: the exit code is 0
 * unless something could not run at all.
 *
 * Flags:
 *   --quick                  c=10 only, 3 s cells, 10 s to settle, fewer TTFB samples, 3 import runs
 *                            (about two minutes)
 *   --only=a,b               parts: direct, floor, gateway, mysql, portkey, cache, cache-miss, cache-off,
 *                            guardrails, guardrails-off, responses, messages (load targets),
 *                            bundles, store-ops, cost
 *   --duration=6             seconds per measured cell;  --warmup=1  seconds of warm-up before each cell
 *   --settle=30              seconds of load each server gets before the first cell (modes alternating in
 *                            5 s rounds) so that V8 has compiled its hot code: a large app takes ~25 s
 *   --concurrency=1,10,64    connections;  --modes=json,stream
 *   --threads=1              wrk threads (one leaves the other core to the server under test)
 *   --profile                start the gateway with --cpu-prof and print its top self-time functions
 *   --rate-limit=false       no rate-limit policy (by default one is created for the benchmark key, as the
 *                            targets are stated with one)
 *   --gateway-env=A=1,B=2    extra environment for the gateway process
 *   --gateway-node-args="--max-semi-space-size=8"   Node flags for the gateway process instead of npm start's
 *                            (space-separated; npm start's environment, e.g. MALLOC_ARENA_MAX, still applies)
 *   --max-wait=120           seconds the run may wait, in all, for other processes to go quiet before a cell
 *   --open-loop=0.5          after the closed-loop cells, offer each target a fixed rate of this share of the
 *                            floor's measured c=10 throughput (per mode) and report p50/p99 over the floor's
 *                            (0 skips it);  --open-loop-duration=10  seconds per open-loop cell
 *   --rounds=1               measure every cell this many times, interleaved across targets; tables show the
 *                            median cell, and the guardrails target the median of its per-round paired differences
 *   --no-save                do not write bench/results/<time>.json
 *   --baseline=DIR           also run the gateway of another checkout (a worktree at the commit to compare with):
 *                            every gateway target gets a twin (`gateway@base`) measured right after it in every
 *                            round; the report adds the per-round paired CPU and throughput ratios
 *   --baseline-node-args="..."  Node flags of the baseline's gateway (with --baseline=. : two flag sets paired)
 *   --burst=500              streams in the burst of new streams (each its own connection, chunks 50 ms apart),
 *                            through the floor and the gateway after the TTFB table (0 skips it);
 *                            --bursts=3 (5 without --quick)  bursts, a second apart; medians reported
 */

/**
 * `mysql`: the gateway measured like `gateway`, but on the MySQL store (GATEWAY_STORE=mysql) on a private MariaDB
 * server the run starts (scripts/mariadb.ts), blobs in a folder: one process of a self-hosted deployment of replicas.
 * `cache`: the gateway with a `cache: {mode: "simple"}` config, the same request repeated (hits).
 * `cache-miss`: the same config, every request's body unique (each is a miss that calls the provider and stores
 * the answer): compared with `cache-off` (the same unique bodies and inline config without `cache`), what the
 * cache costs a request it cannot answer; with `gateway` when `cache-off` is not measured.
 * `guardrails`: the gateway with a config of input guardrails (a regex check and a PII check) on a 2 KB prompt,
 * JSON only: compared with `guardrails-off` (the same 2 KB prompt and inline config without its guardrails),
 * what guardrails add to a request that passes them; compared with `gateway`, what the whole request adds.
 */
type Target =
  | "direct"
  | "floor"
  | "gateway"
  | "mysql"
  | "portkey"
  | "cache"
  | "cache-miss"
  | "cache-off"
  | "guardrails"
  | "guardrails-off"
  | "responses"
  | "messages";
type Mode = "json" | "stream";
const TARGETS: Target[] = [
  "direct",
  "floor",
  "gateway",
  "mysql",
  "portkey",
  "cache",
  "cache-miss",
  "cache-off",
  "guardrails",
  "guardrails-off",
  "responses",
  "messages",
];
/** Targets measured in JSON only (the guardrails cells). */
const JSON_ONLY: ReadonlySet<Target> = new Set(["guardrails", "guardrails-off"]);
/** The modes a target is measured in. */
const modesOf = (target: Target): Mode[] =>
  JSON_ONLY.has(target) ? config.modes.filter((mode) => mode === "json") : config.modes;
/**
 * Connections a target is measured at: the guardrails pair at c=1 as well, whatever `--concurrency` says. At c=1
 * p50 is the latency a request pays for its guardrails; at c=10 the gateway's event loop is saturated and each
 * request also waits for the ones ahead of it, so added CPU shows there about nine times over.
 */
const concurrencyOf = (target: Target): number[] =>
  JSON_ONLY.has(target) && !config.concurrency.includes(1) ? [1, ...config.concurrency] : config.concurrency;
const PARTS = [...TARGETS, "bundles", "store-ops", "cost"] as const;
/** The targets that are this gateway (the server built from bench/gateway-server.ts), which `--baseline` twins. */
const GATEWAY_TARGETS: ReadonlySet<Target> = new Set(
  TARGETS.filter((target) => !["direct", "floor", "mysql", "portkey"].includes(target)),
);
const isFormatTarget = (target: Target): target is FormatTarget => target === "responses" || target === "messages";

const flags = parseFlags(process.argv.slice(2));
const quick = flagOn(flags, "quick");
const only = flags.only ? new Set(flags.only.split(",").map((part) => part.trim())) : undefined;
for (const part of only ?? []) {
  if (!(PARTS as readonly string[]).includes(part)) {
    console.error(`unknown part '${part}' in --only (known: ${PARTS.join(", ")})`);
    process.exit(2);
  }
}
const wants = (part: string) => !only || only.has(part);
const config = {
  quick,
  durationS: Number(flags.duration ?? (quick ? 3 : 6)),
  warmupS: Number(flags.warmup ?? 1),
  settleS: Number(flags.settle ?? (quick ? 10 : 30)),
  concurrency: (flags.concurrency ?? (quick ? "10" : "1,10,64")).split(",").map(Number),
  modes: (flags.modes ?? "json,stream").split(",") as Mode[],
  threads: Number(flags.threads ?? 1),
  profile: flagOn(flags, "profile"),
  rateLimit: flags["rate-limit"] !== "false",
  gatewayEnv: flags["gateway-env"] ?? "",
  // The gateway runs with the environment and Node flags of `npm start` (package.json), unless told otherwise.
  gatewayStart: npmStartCommand(),
  gatewayNodeArgs: flags["gateway-node-args"]?.split(/\s+/).filter(Boolean),
  ttfb: quick ? { c1: 100, c10: 300, pacedC1: 20, pacedC10: 100 } : { c1: 200, c10: 600, pacedC1: 50, pacedC10: 200 },
  importRuns: quick ? 3 : 7,
  openLoopShare: Number(flags["open-loop"] ?? 0.5),
  openLoopDurationS: Number(flags["open-loop-duration"] ?? (quick ? 5 : 10)),
  save: !flagOn(flags, "no-save"),
  rounds: Math.max(1, Number(flags.rounds ?? 1)),
  /** Another checkout whose gateway is measured beside this one's, cell by cell (`--baseline=DIR`). */
  baseline: flags.baseline ? resolve(flags.baseline) : undefined,
  /** Node flags of the baseline's gateway instead of this run's (`--baseline=. --baseline-node-args=...` pairs flags). */
  baselineNodeArgs: flags["baseline-node-args"]?.split(/\s+/).filter(Boolean),
  burst: { streams: Number(flags.burst ?? 500), bursts: Number(flags.bursts ?? (quick ? 3 : 5)) },
};
const targets = TARGETS.filter(wants);

// ---------------------------------------------------------------------------------------------------------
// Results

interface Cell {
  target: Target;
  mode: Mode;
  concurrency: number;
  wrk: WrkResult;
  /** CPU time of the server under test per request (µs): the mock for `direct`, the proxy otherwise. */
  cpuUsPerRequest?: number;
  /** CPU used by other processes on the machine during the cell, as a share of one core (noise). */
  backgroundCpu?: number;
  /** 2 when the first attempt was noisy and the cell was measured again (the quieter one is kept). */
  attempts?: number;
  /** Which of the `--rounds` it was measured in (0-based). */
  round?: number;
  /** "base": the `--baseline` checkout's gateway (lib/baseline.ts); unset for this checkout's. */
  build?: Build;
}

/** One target under a fixed offered rate (open loop). */
interface OpenLoopCell {
  target: Target;
  mode: Mode;
  result: OpenLoopResult;
  backgroundCpu?: number;
}

interface TargetRun {
  target: Target;
  build?: Build;
  /** Request-log writes the gateway skipped or that failed (its log breaker): work a request did not do. */
  droppedLogs?: number;
  /** Requests the gateway held while its storage thread caught up with the logs (log-backlog-gate.ts). */
  heldRequests?: number;
  /** A burst of new paced streams (lib/burst.ts). */
  burst?: BurstResult;
  version?: string;
  validated: { json: string; stream: string };
  memory?: { rssMb: number; peakRssMb: number };
  /** process.memoryUsage() of the gateway at exit, MB. */
  heap?: Record<string, number>;
  ttfb: Array<TtfbResult & { paced: boolean }>;
  /** The rounds of load before the first cell, with the server's CPU per request in each (JIT settling). */
  warmup?: WarmupRound[];
  storeOpsUnderLoad?: {
    requests: number;
    perRequest: { reads: number; writes: number; byMethod: Record<string, number> };
  };
  features?: Record<string, string>;
  error?: string;
}

const results: {
  startedAt: string;
  machine: Record<string, unknown>;
  config: typeof config;
  cells: Cell[];
  openLoop: OpenLoopCell[];
  runs: TargetRun[];
  targets?: Record<string, { met: boolean | null; detail: string }>;
  profile?: ProfileSummary;
  bundles?: { reports: BundleReport[]; baselineImportMs: number; packages: PackageImport[] };
  storeOps?: StoreOpsResult;
  cost?: unknown;
  notes: string[];
} = {
  startedAt: new Date().toISOString(),
  machine: {},
  config,
  cells: [],
  openLoop: [],
  runs: [],
  notes: [],
};

// ---------------------------------------------------------------------------------------------------------
// Environment

function packageVersion(path: string): string | undefined {
  try {
    return (JSON.parse(readFileSync(join(REPO_DIR, path, "package.json"), "utf8")) as { version: string }).version;
  } catch {
    return undefined;
  }
}

function gitState(): string {
  try {
    const head = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: REPO_DIR, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain"], { cwd: REPO_DIR, encoding: "utf8" })
      .split("\n")
      .filter(Boolean).length;
    return dirty > 0 ? `${head} + ${dirty} changed files` : head;
  } catch {
    return "unknown";
  }
}

const node = benchNode();
results.machine = {
  git: gitState(),
  cpu: cpus()[0]?.model,
  cores: cpus().length,
  memoryGb: Math.round(totalmem() / 2 ** 30),
  node: nodeVersion(node),
  nodePath: node,
  portkey: portkeyVersion(),
  honoNodeServer: {
    ours: packageVersion("node_modules/@hono/node-server"),
    portkeys: packageVersion("node_modules/@portkey-ai/gateway/node_modules/@hono/node-server"),
  },
};
console.log(
  `AI gateway benchmarks: ${results.machine.cores} x ${results.machine.cpu}, ${results.machine.memoryGb} GB; servers on ${results.machine.node} (${node}); tree ${results.machine.git}; load average ${loadavg()[0]!.toFixed(2)}`,
);
const hono = results.machine.honoNodeServer as { ours?: string; portkeys?: string };
console.log(
  `@hono/node-server: ours ${hono.ours} (must be 2.x), Portkey's ${hono.portkeys ?? "(shared)"} (needs 1.14.1, issue #1389)`,
);
console.log(
  `gateway started as npm start starts it: ${[
    ...Object.entries(config.gatewayStart.env).map(([name, value]) => `${name}=${value}`),
    "node",
    ...(config.gatewayNodeArgs ?? config.gatewayStart.nodeArgs),
  ].join(" ")}${config.gatewayNodeArgs ? " (--gateway-node-args)" : ""}`,
);
if (!hono.ours?.startsWith("2.")) results.notes.push(`our @hono/node-server is ${hono.ours}, expected 2.x`);

// ---------------------------------------------------------------------------------------------------------
// Load benchmarks

/**
 * A pace is the mock's path prefix for a streamed answer: "" (the whole stream in one write), "/paced" (chunks
 * `--paced-gap-ms` apart, the TTFB table) or "/paced-50" (50 ms apart, the burst of new streams).
 */
type Pace = "" | "/paced" | "/paced-50";

function requestFor(target: Target, baseUrl: string, mockUrl: string, stream: boolean, pace: Pace = "") {
  const path = isFormatTarget(target)
    ? formatPath(target)
    : `${target === "direct" || target === "floor" ? pace : ""}/v1/chat/completions`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    authorization: `Bearer ${BENCH_PROVIDER_KEY}`,
  };
  if (target === "portkey") {
    headers["x-portkey-provider"] = "openai";
    headers["x-portkey-custom-host"] = `${mockUrl}${pace}/v1`;
  }
  const request: { url: string; headers: Record<string, string>; body: string; uniqueBodies?: boolean } = {
    url: `${baseUrl}${path}`,
    headers,
    body: isFormatTarget(target) ? formatBody(target, stream) : benchRequest(stream),
  };
  return request;
}

/**
 * The guardrails cell's request: the benchmark's chat body with a 2 KB user prompt of ordinary prose (no PII,
 * no forbidden word: the request passes its guardrails and reaches the provider).
 */
function guardedRequest(): string {
  const sentence =
    "Summarise the quarterly planning notes for the platform team, keeping the deadlines and owners in order. ";
  const body = JSON.parse(benchRequest(false));
  body.messages[1].content = sentence.repeat(Math.ceil(2048 / sentence.length)).slice(0, 2048);
  return JSON.stringify(body);
}

async function validate(
  url: string,
  headers: Record<string, string>,
  body: string,
  stream: boolean,
  minChunks = 20,
  target?: Target,
): Promise<string> {
  try {
    const response = await fetch(url, { method: "POST", headers, body });
    const text = await response.text();
    if (response.status !== 200) return `FAILED: HTTP ${response.status} ${text.slice(0, 200)}`;
    if (target && isFormatTarget(target)) return checkFormatAnswer(target, text, stream, minChunks);
    if (!stream) {
      const json = JSON.parse(text);
      return typeof json.choices?.[0]?.message?.content === "string"
        ? "ok"
        : `FAILED: unexpected body ${text.slice(0, 200)}`;
    }
    const chunks = text.split("\n").filter((line) => line.startsWith("data: {")).length;
    if (!text.includes("data: [DONE]")) return `FAILED: no [DONE] (${chunks} chunks)`;
    return chunks >= minChunks ? `ok (${chunks} chunks)` : `FAILED: ${chunks} chunks`;
  } catch (error) {
    return `FAILED: ${(error as Error).message}`;
  }
}

async function startTarget(
  target: Target,
  mock: ServerProcess,
  profileDir: string,
  build: Build,
): Promise<ServerProcess | undefined> {
  if (target === "direct") return undefined;
  if (target === "floor") return spawnServer("floor", join(BENCH_DIR, "floor-proxy.ts"), [`--upstream=${mock.url}`]);
  if (target === "portkey") return startPortkey();
  const args = ["--count-store-ops"];
  if (config.rateLimit) args.push("--rate-limit");
  const gatewayEnv = [config.gatewayEnv, ...(target === "mysql" ? [await mysqlStoreEnv()] : [])].filter(Boolean);
  if (gatewayEnv.length > 0) args.push(`--gateway-env=${gatewayEnv.join(",")}`);
  return spawnServer(build ? `${target} (${build})` : "gateway", await gatewayLauncher(build), args, {
    env: config.gatewayStart.env,
    nodeArgs: [
      ...((build === "base" ? config.baselineNodeArgs : undefined) ??
        config.gatewayNodeArgs ??
        config.gatewayStart.nodeArgs),
      ...(config.profile ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}${build ? `/${build}` : ""}`] : []),
    ],
  });
}

/** Each build's gateway, built once per run and shared by its targets. */
const launchers = new Map<Build, Promise<string>>();

/**
 * The gateway built like `npm start` builds it (scripts/build.ts): plain JavaScript, no type stripping at run
 * time; from the `--baseline` checkout for the "base" build.
 */
function gatewayLauncher(build: Build): Promise<string> {
  let launcher = launchers.get(build);
  if (!launcher) {
    launcher = (async () => {
      if (build === "base") {
        const { launcher: file, outdir } = await buildBaseline(config.baseline!);
        process.once("exit", () => rmSync(outdir, { recursive: true, force: true }));
        return file;
      }
      const buildDir = scratchBuildDir("bench-gateway");
      await buildLocal(buildDir, { name: "gateway-server", source: "bench/gateway-server.ts" });
      process.once("exit", () => rmSync(buildDir, { recursive: true, force: true }));
      return join(buildDir, "gateway-server.mjs");
    })();
    launchers.set(build, launcher);
  }
  return launcher;
}

/**
 * The `mysql` target's store: a private MariaDB server (scripts/mariadb.ts, stopped with this process) and a blob
 * folder, as the gateway's environment (NAME=value,...). One gateway process on it, measured like `gateway`.
 */
async function mysqlStoreEnv(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "bench-mysql-"));
  process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
  const server = await startMariaDb({ dir: join(dir, "server"), bufferPoolMb: 256 });
  const url = await server.createDatabase("bench");
  return [
    "GATEWAY_STORE=mysql",
    `DATABASE_URL=${url}`,
    `GATEWAY_MASTER_KEY=${randomBytes(32).toString("base64")}`,
    "GATEWAY_BLOB_STORE=folder",
    `GATEWAY_BLOB_DIR=${join(dir, "blobs")}`,
  ].join(",");
}

/** A started target: the process under test (none for `direct`) and how to build its requests. */
interface Live {
  target: Target;
  run: TargetRun;
  server?: ServerProcess;
  /** Whose CPU and memory we report: the proxy, or the mock for `direct`. */
  measured: ServerProcess;
  /** "base" for the `--baseline` checkout's gateway. */
  build?: Build;
  make(
    stream: boolean,
    pace?: Pace,
  ): { url: string; headers: Record<string, string>; body: string; uniqueBodies?: boolean };
}

/** A target's name as the report prints it: "gateway", or "gateway@base" for the `--baseline` twin. */
const labelOf = (target: Target, build: Build) => (build ? `${target}@${build}` : target);

async function startLive(
  target: Target,
  mock: ServerProcess,
  profileDir: string,
  build?: Build,
): Promise<Live | undefined> {
  const run: TargetRun = { target, build, validated: { json: "-", stream: "-" }, ttfb: [] };
  results.runs.push(run);
  let server: ServerProcess | undefined;
  try {
    server = await startTarget(target, mock, profileDir, build);
  } catch (error) {
    run.error = (error as Error).message.split("\n")[0];
    console.log(`  ${labelOf(target, build)}: could not start: ${run.error}`);
    return undefined;
  }
  const baseUrl = server?.url ?? mock.url;
  if (target === "gateway" || target === "mysql") run.features = server!.info.features;
  if (target === "portkey") run.version = server!.info.version;
  const make = (stream: boolean, pace: Pace = "") => {
    const request = requestFor(target, baseUrl, mock.url, stream, pace);
    if (target === "gateway" || target === "mysql" || isFormatTarget(target)) {
      Object.assign(request.headers, {
        "x-gateway-api-key": server!.info.apiKey,
        // The formats are translated to chat for a provider without a native route for them (lib/format-requests.ts).
        "x-gateway-provider": isFormatTarget(target) ? TRANSLATED_PROVIDER : "openai",
        "x-gateway-custom-host": `${mock.url}${pace}/v1`,
      });
    }
    if (target === "guardrails" || target === "guardrails-off") {
      request.body = guardedRequest();
      const guardrails = [
        {
          "default.regexMatch": { rule: "(?i)\\b(password|api[_ -]?key)\\b", not: true },
          "default.pii": {},
          deny: true,
        },
      ];
      Object.assign(request.headers, {
        "x-gateway-api-key": server!.info.apiKey,
        "x-gateway-config": JSON.stringify({
          provider: "openai",
          custom_host: `${mock.url}${pace}/v1`,
          ...(target === "guardrails" ? { input_guardrails: guardrails } : {}),
        }),
      });
    }
    if (target === "cache" || target === "cache-miss" || target === "cache-off") {
      // cache: one request repeated, so after the first every request is a hit (a replayed stream for stream
      // cells). cache-miss: wrk makes every body unique (uniqueBodies), so every request misses and stores.
      // cache-off: the same unique bodies and config without `cache`, the uncached path cache-miss is held to.
      if (target !== "cache") {
        request.body = request.body.replace("in one short sentence.", UNIQUE_MARKER);
        request.uniqueBodies = true;
      }
      Object.assign(request.headers, {
        "x-gateway-api-key": server!.info.apiKey,
        "x-gateway-config": JSON.stringify({
          provider: "openai",
          custom_host: `${mock.url}${pace}/v1`,
          ...(target === "cache-off" ? {} : { cache: { mode: "simple" } }),
        }),
      });
    }
    return request;
  };
  for (const mode of JSON_ONLY.has(target) ? (["json"] as const) : (["json", "stream"] as const)) {
    const request = make(mode === "stream");
    // A replayed stream sends its text in fewer, larger chunks than the mock does.
    const minChunks = target === "cache" ? 3 : 20;
    // The check sends the marker as written, so cache-miss's stream check would replay its own JSON check's
    // entry: it asks for a fresh answer instead (REFRESH), as every measured request, being unique, gets.
    const headers =
      target === "cache-miss" ? { ...request.headers, "x-gateway-cache-force-refresh": "true" } : request.headers;
    run.validated[mode] = await validate(request.url, headers, request.body, mode === "stream", minChunks, target);
  }
  console.log(
    `  ${labelOf(target, build)}: ${server ? `pid ${server.pid} ` : ""}${baseUrl}; check json ${run.validated.json}, stream ${run.validated.stream}`,
  );
  return { target, run, server, measured: server ?? mock, make, build };
}

/** Background CPU (share of a core) above which a cell is measured again once: someone else used the machine. */
const NOISY_CPU = 0.15;

/** Seconds the whole run may spend waiting for the machine to be quiet before a cell (`--max-wait`). */
let waitBudgetS = Number(flags["max-wait"] ?? (quick ? 30 : 120));

/** Waits (within the run's budget) until other processes use less than NOISY_CPU for a second. */
async function waitForQuiet(ourPids: () => number[]): Promise<number | undefined> {
  let waited = 0;
  for (;;) {
    const sample = startBackgroundCpu();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const background = sample(ourPids());
    if (background === undefined || background < NOISY_CPU || waitBudgetS <= 0) {
      if (waited > 0)
        console.log(
          `      (waited ${waited} s for a quiet machine; background now ${fmt((background ?? 0) * 100, 0)}%)`,
        );
      return background;
    }
    waited++;
    waitBudgetS--;
  }
}

interface WarmupRound {
  mode: Mode;
  rps: number;
  cpuUsPerRequest?: number;
}

const SETTLE_ROUND_S = 5;

/**
 * Loads a server (c=10, modes alternating) for `--settle` seconds before anything is measured. V8 compiles
 * hot code on background threads as it sees it run: on the gateway this took about 25 s of load (its CPU
 * per request fell from ~930 to ~630 µs, V8's threads from ~170 to ~50 µs of it), so cells measured after a
 * few seconds would report the compiler, not the server. Every target gets the same, and the rounds'
 * figures are printed and saved so that whether it settled can be seen.
 */
async function settle(live: Live): Promise<WarmupRound[]> {
  const rounds: WarmupRound[] = [];
  const modes = modesOf(live.target);
  const count = Math.max(modes.length, Math.round(config.settleS / SETTLE_ROUND_S));
  for (let index = 0; index < count; index++) {
    const mode = modes[index % modes.length] as Mode;
    const cpuBefore = processCpuSeconds(live.measured.pid);
    const wrk = await runWrk({
      ...live.make(mode === "stream"),
      connections: 10,
      durationS: Math.min(SETTLE_ROUND_S, Math.max(1, config.settleS)),
      threads: config.threads,
    });
    const cpuAfter = processCpuSeconds(live.measured.pid);
    rounds.push({
      mode,
      rps: Math.round(wrk.rps),
      cpuUsPerRequest:
        cpuBefore !== undefined && cpuAfter !== undefined && wrk.requests > 0
          ? Math.round(((cpuAfter - cpuBefore) * 1e6) / wrk.requests)
          : undefined,
    });
  }
  const trail = (mode: Mode) =>
    rounds
      .filter((round) => round.mode === mode)
      .map((round) => round.cpuUsPerRequest ?? "?")
      .join(" > ");
  console.log(
    `  ${live.target}: warm-up ${rounds.length} x ${SETTLE_ROUND_S} s, CPU µs/request per round: ${config.modes.map((mode) => `${mode} ${trail(mode)}`).join("; ")}`,
  );
  return rounds;
}

async function measureCell(live: Live, mode: Mode, connections: number, ourPids: () => number[]): Promise<Cell> {
  const request = live.make(mode === "stream");
  let best: Cell | undefined;
  for (let attempt = 0; attempt < 2; attempt++) {
    await waitForQuiet(ourPids);
    if (config.warmupS > 0)
      await runWrk({ ...request, connections, durationS: config.warmupS, threads: config.threads });
    const cpuBefore = processCpuSeconds(live.measured.pid);
    const background = startBackgroundCpu();
    let wrkPid: number | undefined;
    const wrk = await runWrk({
      ...request,
      connections,
      durationS: config.durationS,
      threads: config.threads,
      onStart: (pid) => {
        wrkPid = pid;
      },
    });
    const backgroundCpu = background([...ourPids(), ...(wrkPid ? [wrkPid] : [])]);
    const cpuAfter = processCpuSeconds(live.measured.pid);
    const cell: Cell = {
      target: live.target,
      mode,
      concurrency: connections,
      wrk,
      backgroundCpu,
      attempts: attempt + 1,
    };
    if (cpuBefore !== undefined && cpuAfter !== undefined && wrk.requests > 0) {
      cell.cpuUsPerRequest = ((cpuAfter - cpuBefore) * 1e6) / wrk.requests;
    }
    if (!best || (cell.backgroundCpu ?? 0) < (best.backgroundCpu ?? 0)) best = { ...cell, attempts: attempt + 1 };
    if ((cell.backgroundCpu ?? 0) < NOISY_CPU) break;
  }
  return best!;
}

/**
 * Tail latency at a fixed offered rate (issue 20's restated p99 target): each target is offered the same
 * rate, a share of what the floor proxy served at c=10 in this run, so every one runs below saturation.
 */
async function openLoopPhase(lives: Live[], ourPids: () => number[]): Promise<void> {
  for (const mode of config.modes) {
    const floorCapacity = cellOf("floor", mode, 10)?.wrk.rps;
    if (!floorCapacity) {
      results.notes.push(`open loop (${mode}) skipped: no floor cell at c=10 to size the rate from`);
      continue;
    }
    const rate = Math.round(floorCapacity * config.openLoopShare);
    // Open-loop bodies are all alike: a cache-miss target would answer hits there (and cache-off is only its baseline).
    for (const live of lives.filter(
      (candidate) =>
        !candidate.build &&
        candidate.target !== "cache-miss" &&
        candidate.target !== "cache-off" &&
        modesOf(candidate.target).includes(mode),
    )) {
      await waitForQuiet(ourPids);
      const background = startBackgroundCpu();
      let clientPid: number | undefined;
      try {
        const result = await runOpenLoop(
          { ...live.make(mode === "stream"), rate, durationS: config.openLoopDurationS, warmupS: 1 },
          (pid) => {
            clientPid = pid;
          },
        );
        const backgroundCpu = background([...ourPids(), ...(clientPid ? [clientPid] : [])]);
        results.openLoop.push({ target: live.target, mode, result, backgroundCpu });
        console.log(
          `    ${live.target.padEnd(8)} ${mode.padEnd(6)} open loop ${rate} req/s  p50 ${fmt(result.p50)} ms  p99 ${fmt(result.p99)} ms  errors ${result.errors}  dropped ${result.dropped}`,
        );
      } catch (error) {
        console.log(`    ${live.target}: open loop FAILED: ${(error as Error).message.split("\n")[0]}`);
      }
    }
  }
}

function openLoopOf(target: Target, mode: Mode): OpenLoopCell | undefined {
  return results.openLoop.find((cell) => cell.target === target && cell.mode === mode);
}

function printOpenLoopTable(): void {
  if (results.openLoop.length === 0) return;
  const header = `${"mode".padEnd(7)}${"target".padEnd(9)}${"rate".padStart(7)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"max ms".padStart(9)}${"errors".padStart(8)}${"dropped".padStart(9)}${"+p50 vs floor".padStart(15)}${"+p99 vs floor".padStart(15)}`;
  console.log(
    `\nOpen loop (fixed offered rate = ${config.openLoopShare * 100}% of the floor's c=10 throughput, ${config.openLoopDurationS} s; latency from when each request was due):`,
  );
  console.log(header);
  console.log("-".repeat(header.length));
  for (const cell of results.openLoop) {
    const floor = openLoopOf("floor", cell.mode);
    const over = (key: "p50" | "p99") =>
      floor && cell.target !== "floor" && cell.target !== "direct"
        ? `+${fmt(cell.result[key] - floor.result[key])} ms`
        : "";
    console.log(
      `${cell.mode.padEnd(7)}${cell.target.padEnd(9)}${String(cell.result.rate).padStart(7)}${fmt(cell.result.p50).padStart(9)}${fmt(cell.result.p99).padStart(9)}${fmt(cell.result.max).padStart(9)}${String(cell.result.errors).padStart(8)}${String(cell.result.dropped).padStart(9)}${over("p50").padStart(15)}${over("p99").padStart(15)}`,
    );
  }
}

/**
 * A burst of new streams (lib/burst.ts) through the floor and the gateway (and its `--baseline` twin): time to
 * first byte when `--burst` (500) streams, each on a new connection, start at once against chunks 50 ms apart.
 */
async function burstPhase(lives: Live[], ourPids: () => number[]): Promise<void> {
  for (const live of lives.filter((candidate) => candidate.target === "floor" || candidate.target === "gateway")) {
    await waitForQuiet(ourPids);
    const request = live.make(true, "/paced-50");
    live.run.burst = await measureBurst({ ...request, ...config.burst });
    const burst = live.run.burst;
    console.log(
      `    ${labelOf(live.target, live.build).padEnd(8)} burst of ${burst.streams} new streams x ${burst.bursts}: TTFB p50 ${fmt(burst.ttfbP50, 1)} ms (${burst.ttfbP50s.join(", ")}), p99 ${fmt(burst.ttfbP99, 1)} ms, last byte p50 ${fmt(burst.ttlbP50, 1)} ms, errors ${burst.errors}`,
    );
  }
}

async function ttfbFor(live: Live): Promise<void> {
  const runs: Array<[number, number, boolean]> = [
    [1, config.ttfb.c1, false],
    [10, config.ttfb.c10, false],
    [1, config.ttfb.pacedC1, true],
    [10, config.ttfb.pacedC10, true],
  ];
  for (const [concurrency, requests, paced] of runs) {
    const request = live.make(true, paced ? "/paced" : "");
    const result = await measureTtfb({ ...request, requests, concurrency });
    live.run.ttfb.push({ ...result, paced });
  }
}

async function stopLive(live: Live): Promise<void> {
  if (!live.server) return;
  await live.server.stop();
  const final = live.server.messages.find((message) => message.final);
  if (final?.storeOps && final.requests > 0) {
    const ops = final.storeOps as StoreOpCounts;
    const byMethod: Record<string, number> = {};
    for (const [name, count] of Object.entries(ops.byMethod)) byMethod[name] = count / final.requests;
    live.run.storeOpsUnderLoad = {
      requests: final.requests,
      perRequest: { reads: ops.reads / final.requests, writes: ops.writes / final.requests, byMethod },
    };
  }
  if (final?.memory) live.run.heap = final.memory;
  if (final && typeof final.droppedLogs === "number") live.run.droppedLogs = final.droppedLogs;
  if (final && typeof final.heldRequests === "number") live.run.heldRequests = final.heldRequests;
}

const fmt = (value: number | undefined, digits = 2) =>
  value === undefined || Number.isNaN(value) ? "-" : value.toFixed(digits);

function allConcurrencies(): number[] {
  return [...new Set(targets.flatMap(concurrencyOf))].sort((a, b) => a - b);
}

/** The cell of a target, mode and concurrency: with `--rounds`, the median one by throughput. */
function cellOf(target: Target, mode: Mode, concurrency: number, build?: Build): Cell | undefined {
  const cells = cellsOf(target, mode, concurrency, build).sort((a, b) => a.wrk.rps - b.wrk.rps);
  return cells[Math.floor((cells.length - 1) / 2)];
}

function cellsOf(target: Target, mode: Mode, concurrency: number, build?: Build): Cell[] {
  return results.cells.filter(
    (cell) => cell.target === target && cell.mode === mode && cell.concurrency === concurrency && cell.build === build,
  );
}

/** The median CPU per request of a target's cells over the rounds (each round's cell, not the median cell's). */
function cpuOf(target: Target, mode: Mode, concurrency: number, build?: Build): number | undefined {
  const values = cellsOf(target, mode, concurrency, build).flatMap((cell) =>
    cell.cpuUsPerRequest === undefined ? [] : [cell.cpuUsPerRequest],
  );
  return values.length > 0 ? median(values) : undefined;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function printLoadTable(): void {
  const header = `${"mode".padEnd(7)}${"c".padStart(3)}  ${"target".padEnd(8)}${"req/s".padStart(8)}${"p50 ms".padStart(9)}${"p99 ms".padStart(9)}${"errors".padStart(8)}${"cpu µs/req".padStart(12)}${"x direct".padStart(10)}${"x floor".padStart(9)}${"x portkey".padStart(11)}${"+p99 vs direct".padStart(16)}${"bg cpu".padStart(8)}`;
  console.log(
    `\nLoad (wrk -t${config.threads}, ${config.durationS} s per cell after ${config.warmupS} s warm-up; latency = whole response):`,
  );
  console.log(header);
  console.log("-".repeat(header.length));
  for (const mode of config.modes) {
    for (const concurrency of allConcurrencies()) {
      const direct = cellOf("direct", mode, concurrency);
      const floor = cellOf("floor", mode, concurrency);
      const portkey = cellOf("portkey", mode, concurrency);
      for (const [target, build] of targets.flatMap(
        (target): Array<[Target, Build]> => [
          [target, undefined],
          [target, "base"],
        ],
      )) {
        const cell = cellOf(target, mode, concurrency, build);
        if (!cell) continue;
        const ratio = (base: Cell | undefined) =>
          base && base !== cell ? `${((cell.wrk.rps / base.wrk.rps) * 100).toFixed(0)}%` : "";
        const added = direct && target !== "direct" ? `+${fmt(cell.wrk.p99 - direct.wrk.p99)} ms` : "";
        console.log(
          `${mode.padEnd(7)}${String(concurrency).padStart(3)}  ${labelOf(target, build).padEnd(8)}${cell.wrk.rps.toFixed(0).padStart(8)}${fmt(cell.wrk.p50).padStart(9)}${fmt(cell.wrk.p99).padStart(9)}${String(cell.wrk.errors).padStart(8)}${fmt(cpuOf(target, mode, concurrency, build), 0).padStart(12)}${(target === "direct" ? "" : ratio(direct)).padStart(10)}${(target !== "direct" && target !== "floor" ? ratio(floor) : "").padStart(9)}${(target === "gateway" ? ratio(portkey) : "").padStart(11)}${added.padStart(16)}${`${fmt((cell.backgroundCpu ?? Number.NaN) * 100, 0)}%`.padStart(8)}`,
        );
      }
    }
  }
}

function printTtfbTable(): void {
  const rows = results.runs.filter((run) => run.ttfb.length > 0);
  if (rows.length === 0) return;
  console.log("\nStreaming time to first byte (node:http client, first body chunk; ttlb = last byte), ms:");
  console.log(
    `${"target".padEnd(9)}${"mock".padEnd(7)}${"c".padStart(3)}${"n".padStart(6)}${"ttfb p50".padStart(10)}${"ttfb p99".padStart(10)}${"ttlb p50".padStart(10)}${"ttlb p99".padStart(10)}${"errors".padStart(8)}`,
  );
  for (const run of rows) {
    for (const t of run.ttfb) {
      console.log(
        `${labelOf(run.target, run.build).padEnd(9)}${(t.paced ? "paced" : "fast").padEnd(7)}${String(t.concurrency).padStart(3)}${String(t.requests).padStart(6)}${fmt(t.ttfbP50).padStart(10)}${fmt(t.ttfbP99).padStart(10)}${fmt(t.ttlbP50).padStart(10)}${fmt(t.ttlbP99).padStart(10)}${String(t.errors).padStart(8)}`,
      );
    }
  }
}

function printMemory(): void {
  console.log("\nMemory of the server under test at the end of its run (direct = the mock), MB:");
  for (const run of results.runs) {
    const heap = run.heap
      ? `   heap used ${fmt(run.heap.heapUsed, 0)} / total ${fmt(run.heap.heapTotal, 0)}, external ${fmt(run.heap.external, 0)}`
      : "";
    console.log(
      `  ${labelOf(run.target, run.build).padEnd(8)} rss ${fmt(run.memory?.rssMb, 0).padStart(5)}   peak ${fmt(run.memory?.peakRssMb, 0).padStart(5)}${heap}${run.droppedLogs ? `   DROPPED ${run.droppedLogs} request logs` : ""}${run.heldRequests ? `   held ${run.heldRequests} requests for the log backlog` : ""}${run.error ? `   (${run.error})` : ""}`,
    );
  }
}

/**
 * What the guardrails add at one concurrency: the median of the paired differences (each round's two cells were
 * measured back to back, so the difference is the least noisy figure).
 */
function addedByGuardrails(concurrency: number): { added: number; errors: number; detail: string } | undefined {
  const guarded = cellOf("guardrails", "json", concurrency);
  const unguarded = cellOf("guardrails-off", "json", concurrency);
  if (!guarded || !unguarded) return undefined;
  const pairs = cellsOf("guardrails", "json", concurrency).flatMap((cell) => {
    const other = cellsOf("guardrails-off", "json", concurrency).find((candidate) => candidate.round === cell.round);
    return other ? [cell.wrk.p50 - other.wrk.p50] : [];
  });
  const added = median(pairs);
  const signed = (value: number) => `${value >= 0 ? "+" : ""}${value.toFixed(2)}`;
  const rounds = pairs.length > 1 ? `, median of ${pairs.length} paired rounds: ${pairs.map(signed).join(", ")}` : "";
  return {
    added,
    errors: cellsOf("guardrails", "json", concurrency).reduce((sum, cell) => sum + cell.wrk.errors, 0),
    detail: `${signed(added)} ms p50 (${guarded.wrk.p50.toFixed(2)} vs ${unguarded.wrk.p50.toFixed(2)}${rounds}); CPU ${fmt(guarded.cpuUsPerRequest, 0)} vs ${fmt(unguarded.cpuUsPerRequest, 0)} µs per request`,
  };
}

/** Issue 46's shares of the floor: throughput at c=10 (at least) and CPU per request (at most), per target. */
const FLOOR_TARGETS: Array<{ target: Target; mode: Mode; throughput: number; cpu: number }> = [
  { target: "gateway", mode: "json", throughput: 0.65, cpu: 2.2 },
  { target: "gateway", mode: "stream", throughput: 0.55, cpu: 2.5 },
  { target: "cache", mode: "json", throughput: 0.9, cpu: 1.5 },
  { target: "cache", mode: "stream", throughput: 0.9, cpu: 1.5 },
];

type Check = { met: boolean | null; detail: string };

function checkTargets(): void {
  const checks: Record<string, Check> = {};
  const gatewayRun = results.runs.find((run) => run.target === "gateway" && !run.build);
  for (const { target, mode, throughput, cpu } of FLOOR_TARGETS) {
    if (!config.modes.includes(mode)) continue;
    const cell = cellOf(target, mode, 10);
    const floor = cellOf("floor", mode, 10);
    const [cellCpu, floorCpu] = [cpuOf(target, mode, 10), cpuOf("floor", mode, 10)];
    const name = target === "cache" ? "cache hits" : target;
    const share = `${name} throughput >= ${Math.round(throughput * 100)}% of the floor's (${mode}, c=10)`;
    const cost = `${name} CPU per request <= ${cpu}x the floor's (${mode}, c=10, median of the rounds)`;
    if (!cell || !floor || !cellCpu || !floorCpu) {
      checks[share] = checks[cost] = { met: null, detail: "not measured" };
      continue;
    }
    const ratio = cell.wrk.rps / floor.wrk.rps;
    checks[share] = {
      met: ratio >= throughput && cell.wrk.errors === 0,
      detail: `${(ratio * 100).toFixed(0)}% (${cell.wrk.rps.toFixed(0)} vs ${floor.wrk.rps.toFixed(0)} req/s, median cells)`,
    };
    checks[cost] = {
      met: cellCpu / floorCpu <= cpu,
      detail: `${(cellCpu / floorCpu).toFixed(2)}x (${fmt(cellCpu, 0)} vs ${fmt(floorCpu, 0)} µs)`,
    };
  }
  if (config.modes.includes("stream")) {
    const streamCpu = cpuOf("gateway", "stream", 10);
    checks["gateway stream CPU per request <= 250 µs (c=10)"] = streamCpu
      ? { met: streamCpu <= 250, detail: `${fmt(streamCpu, 0)} µs` }
      : { met: null, detail: "not measured" };
  }
  for (const mode of config.modes) {
    const missCpu = cpuOf("cache-miss", mode, 10);
    // The same unique bodies and inline config without `cache` when measured; else the plain gateway cell.
    const offCpu = cpuOf("cache-off", mode, 10);
    const uncached = offCpu ?? cpuOf("gateway", mode, 10);
    const key = `cache miss CPU per request <= 15% above the uncached path's (${mode}, c=10, against ${offCpu ? "cache-off" : "gateway"})`;
    if (!missCpu || !uncached) checks[key] = { met: null, detail: "not measured" };
    else {
      const extra = missCpu / uncached - 1;
      checks[key] = {
        met: extra <= 0.15 && (cellOf("cache-miss", mode, 10)?.wrk.errors ?? 0) === 0,
        detail: `${extra >= 0 ? "+" : ""}${(extra * 100).toFixed(0)}% (${fmt(missCpu, 0)} vs ${fmt(uncached, 0)} µs)`,
      };
    }
  }
  for (const format of ["responses", "messages"] as const) {
    for (const mode of config.modes) {
      const formatCpu = cpuOf(format, mode, 10);
      const chatCpu = cpuOf("gateway", mode, 10);
      const key = `${format} (translated) CPU per request within 20% of chat's (${mode}, c=10)`;
      if (!formatCpu || !chatCpu) checks[key] = { met: null, detail: "not measured" };
      else {
        const extra = formatCpu / chatCpu - 1;
        checks[key] = {
          met: extra <= 0.2 && (cellOf(format, mode, 10)?.wrk.errors ?? 0) === 0,
          detail: `${extra >= 0 ? "+" : ""}${(extra * 100).toFixed(0)}% (${fmt(formatCpu, 0)} vs ${fmt(chatCpu, 0)} µs)`,
        };
      }
    }
  }
  {
    const gateway = gatewayRun?.burst;
    const floor = results.runs.find((run) => run.target === "floor")?.burst;
    const key = `a burst of ${config.burst.streams} new streams: TTFB p50 <= 2x the floor's`;
    checks[key] =
      gateway && floor
        ? {
            met: gateway.ttfbP50 <= 2 * floor.ttfbP50 && gateway.errors === 0,
            detail: `${(gateway.ttfbP50 / floor.ttfbP50).toFixed(2)}x (${fmt(gateway.ttfbP50, 1)} vs ${fmt(floor.ttfbP50, 1)} ms, medians of ${gateway.bursts} bursts; errors ${gateway.errors})`,
          }
        : { met: null, detail: "not measured" };
  }
  for (const mode of config.modes) {
    const gateway = openLoopOf("gateway", mode);
    const floor = openLoopOf("floor", mode);
    const key = `p99 within 1 ms of the floor's at ${config.openLoopShare * 100}% of its capacity (${mode}, open loop)`;
    if (!gateway || !floor) checks[key] = { met: null, detail: "not measured" };
    else {
      const added = gateway.result.p99 - floor.result.p99;
      checks[key] = {
        met: added <= 1 && gateway.result.errors === 0 && gateway.result.dropped === 0,
        detail: `+${added.toFixed(2)} ms (${gateway.result.p99.toFixed(2)} vs ${floor.result.p99.toFixed(2)} at ${gateway.result.rate} req/s; p50 +${(gateway.result.p50 - floor.result.p50).toFixed(2)} ms)`,
      };
    }
  }
  {
    // What the guardrails add: against the same request without them (same 2 KB prompt, same inline config).
    // The target reads the latency a request pays (c=1); c=10, where the event loop is saturated, is shown beside.
    const key = "guardrails (regex + PII, 2 KB prompt) add < 1 ms p50 over the same request without them (json, c=1)";
    const at1 = addedByGuardrails(1);
    const at10 = addedByGuardrails(10);
    if (!at1) checks[key] = { met: null, detail: "not measured" };
    else {
      checks[key] = {
        met: at1.added < 1 && at1.errors === 0,
        detail: `${at1.detail}${at10 ? `; at c=10 (event loop saturated) ${at10.detail}` : ""}`,
      };
    }
  }
  const floorRun = results.runs.find((run) => run.target === "floor");
  for (const concurrency of [1, 10]) {
    const gateway = gatewayRun?.ttfb.find((t) => !t.paced && t.concurrency === concurrency);
    const floor = floorRun?.ttfb.find((t) => !t.paced && t.concurrency === concurrency);
    const key = `streaming TTFB within 1 ms of floor (p50, c=${concurrency})`;
    if (!gateway || !floor) checks[key] = { met: null, detail: "not measured" };
    else {
      const gap = gateway.ttfbP50 - floor.ttfbP50;
      checks[key] = {
        met: gap <= 1,
        detail: `+${gap.toFixed(2)} ms p50 (${gateway.ttfbP50.toFixed(2)} vs ${floor.ttfbP50.toFixed(2)}); p99 ${gateway.ttfbP99.toFixed(2)} vs ${floor.ttfbP99.toFixed(2)}`,
      };
    }
  }
  const rss = gatewayRun?.memory;
  checks["RSS < 200 MB at the end of the run"] = rss
    ? { met: rss.rssMb < 200, detail: `${rss.rssMb.toFixed(0)} MB (peak ${rss.peakRssMb.toFixed(0)} MB)` }
    : { met: null, detail: "not measured" };
  results.targets = checks;
  console.log("\nTargets (gateway):");
  for (const [name, check] of Object.entries(checks)) {
    console.log(`  ${check.met === null ? "  -  " : check.met ? " MET " : "MISSED"}  ${name}: ${check.detail}`);
  }
  if (gatewayRun?.features) {
    console.log(
      `  measured with: ${Object.entries(gatewayRun.features)
        .map(([name, state]) => `${name}: ${state}`)
        .join("; ")}`,
    );
  }
  if (gatewayRun?.storeOpsUnderLoad) {
    const s = gatewayRun.storeOpsUnderLoad;
    const methods = Object.entries(s.perRequest.byMethod)
      .map(([name, count]) => `${name}=${count.toFixed(3)}`)
      .join(", ");
    console.log(
      `  store operations per request under load (${s.requests} requests): reads ${s.perRequest.reads.toFixed(3)}, writes ${s.perRequest.writes.toFixed(3)} [${methods || "-"}]`,
    );
  }
}

/**
 * With `--baseline`: each gateway target against its twin built from the other checkout, round by round (the two
 * cells of a round were measured back to back): the median of the per-round CPU-per-request and throughput ratios.
 */
function printPaired(): void {
  if (!config.baseline) return;
  console.log(`\nPaired against --baseline ${config.baseline} (this checkout / baseline, per round; median):`);
  for (const mode of config.modes) {
    for (const concurrency of allConcurrencies()) {
      for (const target of targets.filter((candidate) => GATEWAY_TARGETS.has(candidate))) {
        const pairs = cellsOf(target, mode, concurrency).flatMap((cell) => {
          const base = cellsOf(target, mode, concurrency, "base").find((other) => other.round === cell.round);
          return base?.cpuUsPerRequest && cell.cpuUsPerRequest
            ? [{ cpu: cell.cpuUsPerRequest / base.cpuUsPerRequest, rps: cell.wrk.rps / base.wrk.rps }]
            : [];
        });
        if (pairs.length === 0) continue;
        const percent = (ratio: number) => `${ratio >= 1 ? "+" : ""}${((ratio - 1) * 100).toFixed(1)}%`;
        console.log(
          `  ${mode.padEnd(6)} c=${String(concurrency).padEnd(3)} ${target.padEnd(14)} CPU/request ${percent(median(pairs.map((pair) => pair.cpu)))} (${pairs.map((pair) => percent(pair.cpu)).join(", ")}; ${fmt(cpuOf(target, mode, concurrency), 0)} vs ${fmt(cpuOf(target, mode, concurrency, "base"), 0)} µs), req/s ${percent(median(pairs.map((pair) => pair.rps)))}`,
        );
      }
    }
  }
}

async function runLoad(): Promise<void> {
  if (!wrkAvailable()) {
    console.log(`\nLoad benchmarks skipped: ${WRK_INSTALL_HINT}`);
    results.notes.push(`load skipped: ${WRK_INSTALL_HINT}`);
    return;
  }
  if (targets.includes("portkey") && !portkeyInstalled())
    results.notes.push("Portkey's gateway is not installed (npm install)");
  const profileDir = mkdtempSync(join(tmpdir(), "bench-profile-"));
  const mock = await spawnServer("mock", join(BENCH_DIR, "mock-upstream.ts"), ["--paced-gap-ms=1"]);
  console.log(
    `\nMock upstream ${mock.url} (pid ${mock.pid}); targets: ${targets.join(", ")}${config.profile ? " (gateway profiled: its numbers include profiler overhead)" : ""}`,
  );
  const lives: Live[] = [];
  const ourPids = () => [process.pid, mock.pid, ...lives.flatMap((live) => (live.server ? [live.server.pid] : []))];
  try {
    for (const target of targets) {
      const live = await startLive(target, mock, profileDir);
      if (live) lives.push(live);
      // The --baseline twin right after it: the two are measured back to back in every round.
      if (config.baseline && GATEWAY_TARGETS.has(target)) {
        const base = await startLive(target, mock, profileDir, "base");
        if (base) lives.push(base);
      }
    }
    // Warm-up: JIT, connection pools, caches (the API key), before anything is measured.
    for (const live of lives) live.run.warmup = await settle(live);
    // Cells interleaved across targets, so a noisy minute on a shared machine hits all of them alike.
    for (let round = 0; round < config.rounds; round++) {
      for (const mode of config.modes) {
        for (const connections of allConcurrencies()) {
          for (const live of lives) {
            if (!modesOf(live.target).includes(mode) || !concurrencyOf(live.target).includes(connections)) continue;
            try {
              const cell = await measureCell(live, mode, connections, ourPids);
              cell.round = round;
              if (live.build) cell.build = live.build;
              results.cells.push(cell);
              console.log(
                `    ${labelOf(live.target, live.build).padEnd(8)} ${mode.padEnd(6)} c=${String(connections).padEnd(3)} ${cell.wrk.rps.toFixed(0).padStart(7)} req/s  p50 ${cell.wrk.p50.toFixed(2)} ms  p99 ${cell.wrk.p99.toFixed(2)} ms  cpu ${fmt(cell.cpuUsPerRequest, 0)} µs/req  errors ${cell.wrk.errors}  background cpu ${fmt((cell.backgroundCpu ?? Number.NaN) * 100, 0)}%`,
              );
            } catch (error) {
              live.run.error = (error as Error).message.split("\n").slice(0, 2).join(" ");
              console.log(`    ${labelOf(live.target, live.build)}: FAILED: ${live.run.error}`);
            }
          }
        }
      }
    }
    if (config.openLoopShare > 0) await openLoopPhase(lives, ourPids);
    if (config.modes.includes("stream")) {
      for (const live of lives) {
        // The TTFB client knows OpenAI's streams ([DONE]); the formats' streams end otherwise.
        if (!modesOf(live.target).includes("stream") || isFormatTarget(live.target)) continue;
        await ttfbFor(live);
        const fast = live.run.ttfb.filter((t) => !t.paced);
        console.log(
          `    ${labelOf(live.target, live.build).padEnd(8)} TTFB ${fast.map((t) => `c=${t.concurrency} p50 ${t.ttfbP50.toFixed(2)} / p99 ${t.ttfbP99.toFixed(2)} ms`).join(", ")}`,
        );
      }
      if (config.burst.streams > 0) await burstPhase(lives, ourPids);
    }
    for (const live of lives) live.run.memory = processMemory(live.measured.pid);
  } finally {
    for (const live of lives) await stopLive(live).catch(() => {});
    await mock.stop();
  }
  printLoadTable();
  printOpenLoopTable();
  printTtfbTable();
  printMemory();
  printPaired();
  if (targets.includes("gateway")) checkTargets();
  if (config.profile) {
    const file = existsSync(profileDir) ? latestProfile(profileDir) : undefined;
    if (file) {
      results.profile = summariseProfile(file, Number(process.env.BENCH_PROFILE_TOP ?? 30));
      console.log(`\n${formatProfile(results.profile)}`);
    } else console.log("\nNo CPU profile was written (did the gateway exit cleanly?)");
  }
  // The .cpuprofile stays in the temp dir (open it in Chrome DevTools); nothing else is kept.
  if (!config.profile) rmSync(profileDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------------------------------------------------
// Serverless figures

function previousResults(): typeof results | undefined {
  const dir = join(BENCH_DIR, "results");
  if (!existsSync(dir)) return undefined;
  const files = readdirSync(dir)
    .filter((file) => file.endsWith(".json"))
    .sort();
  for (let i = files.length - 1; i >= 0; i--) {
    try {
      return JSON.parse(readFileSync(join(dir, files[i]!), "utf8"));
    } catch {
      // skip unreadable files
    }
  }
  return undefined;
}

function printCost(): void {
  const previous = previousResults();
  const sources: string[] = [];
  // Gateway overhead per request: its c=1 non-streamed median latency (mock upstream: nearly all our own time).
  let overheadMs = cellOf("gateway", "json", 1)?.wrk.p50;
  if (overheadMs !== undefined) sources.push("duration: this run's gateway p50 at c=1 (json)");
  else {
    overheadMs = previous?.cells?.find(
      (cell) => cell.target === "gateway" && cell.mode === "json" && cell.concurrency === 1,
    )?.wrk.p50;
    if (overheadMs !== undefined) sources.push("duration: previous run's gateway p50 at c=1");
    else {
      overheadMs = 1;
      sources.push("duration: 1 ms assumed (no measurement)");
    }
  }
  const storeOps = results.storeOps ?? previous?.storeOps;
  sources.push(
    results.storeOps
      ? "store ops: this run"
      : storeOps
        ? "store ops: previous run"
        : "store ops: none measured (0 assumed)",
  );
  // On AWS a request writes on its own path and, amortised, in the analytics stream worker: both are paid for.
  const aws = storeOps?.aws;
  const warm = aws ? addPerRequest(aws.requestPath.json, aws.worker) : storeOps?.warm.json;
  sources.push(aws ? "store ops: AWS request path + stream worker share" : "store ops: local platform");
  const chat = (results.bundles ?? previous?.bundles)?.reports.find(
    (report) => report.family === "chat" && !report.error,
  );
  const options = { ...DEFAULT_COST_OPTIONS, initMs: chat?.initMs ?? DEFAULT_COST_OPTIONS.initMs };
  sources.push(chat ? `init: chat bundle import ${chat.initMs.toFixed(0)} ms` : `init: ${options.initMs} ms assumed`);
  const ops = awsRequestsOf(warm?.byMethod ?? {}, warm?.writeUnits);
  const counterMeasured = (warm?.byMethod["counters.add"] ?? 0) >= 1;
  const lines = standardScenarios({ overheadMs, ops, counterMeasured }, options).map((scenario) =>
    costPerMillion(scenario, options),
  );
  results.cost = { sources, options, lines };
  console.log(`\n${formatCost(lines, options)}`);
  console.log(`  inputs: ${sources.join("; ")}`);
}

// ---------------------------------------------------------------------------------------------------------

const started = Date.now();
if (targets.length > 0) await runLoad();
if (wants("store-ops")) {
  console.log("");
  results.storeOps = await measureStoreOps({ requests: quick ? 20 : 50, rateLimit: config.rateLimit });
  console.log(formatStoreOps(results.storeOps));
}
if (wants("bundles")) {
  console.log("");
  results.bundles = await measureBundles({ runs: config.importRuns, packages: true });
  console.log(formatBundles(results.bundles));
}
if (wants("cost")) printCost();

if (config.save) {
  const dir = join(BENCH_DIR, "results");
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${results.startedAt.replace(/[:.]/g, "-")}.json`);
  writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nResults written to ${file}`);
}
console.log(`Done in ${((Date.now() - started) / 1000).toFixed(0)} s.`);

/** Two per-request operation counts together (the AWS request path and the stream worker's share). */
function addPerRequest(a: PerRequest, b: PerRequest): PerRequest {
  const byMethod = { ...a.byMethod };
  for (const [name, calls] of Object.entries(b.byMethod)) byMethod[name] = (byMethod[name] ?? 0) + calls;
  return {
    reads: a.reads + b.reads,
    writes: a.writes + b.writes,
    other: a.other + b.other,
    byMethod,
    writeUnits: a.writeUnits + b.writeUnits,
    recordBytes: a.recordBytes + b.recordBytes,
  };
}

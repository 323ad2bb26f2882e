import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApiKey } from "../core/auth/api-key-records.ts";
import { type LocalGateway, startLocalGateway } from "../core/platform/local/gateway.ts";
import { flagOn, parseFlags, printReady } from "./lib/cli.ts";
import { MOCK_MODEL } from "./lib/mock-model.ts";
import { instrumentStores } from "./lib/store-counter.ts";

/**
 * This gateway as the benchmark runs it: the local platform (`startLocalGateway`, SQLite stores in a fresh
 * data dir), a real workspace API key (hashed lookup, cached by the authenticator), `x-gateway-provider:
 * openai` with the mock upstream as custom host (127.0.0.1 trusted through TRUSTED_CUSTOM_HOSTS).
 *
 * Features the targets are stated with, and whether this run could turn them on (`features` in the output):
 * - auth: always (a workspace key created here).
 * - rate limit (`--rate-limit`): creates one rate-limit policy through the control-plane API
 *   (POST /v2/policies/rate-limits, Portkey's shape) with a ceiling the benchmark never reaches, so every
 *   request is checked and counted but none refused. Until that route exists the attempt answers 404 and the
 *   feature is reported as unavailable.
 * - logging: request logging (step 9 of the pipeline: one log record per request) runs as the gateway's
 *   default; `--gateway-env=NAME=value,...` passes any setting (e.g. GATEWAY_LOG_BODIES=false). Whether it
 *   wrote anything is seen in the store operations counted under load (`--count-store-ops`).
 *
 * As a process: `node [--cpu-prof] bench/gateway-server.ts [--rate-limit] [--count-store-ops] [--gateway-env=A=1]`
 * prints `{"ready":true,"url","apiKey","features"}`; SIGTERM closes it cleanly (so --cpu-prof writes its file)
 * after printing `{"final":true,"requests","storeOps"}` when counting.
 */

export const BENCH_PROVIDER_KEY = "sk-bench-0000000000000000000000000000";

export interface BenchGatewayOptions {
  dataDir: string;
  rateLimit?: boolean;
  env?: Record<string, string>;
}

export interface BenchGateway {
  url: string;
  gateway: LocalGateway;
  apiKey: string;
  features: Record<string, string>;
  /** Headers of a benchmark request through this gateway to `mockUrl` (`paced` for the paced stream path). */
  requestHeaders(mockUrl: string, paced?: boolean): Record<string, string>;
  close(): Promise<void>;
}

/** The chat request every target gets (a short, realistic body). */
export function benchRequest(stream: boolean): string {
  return JSON.stringify({
    model: MOCK_MODEL,
    messages: [
      { role: "system", content: "You are a helpful assistant. Answer briefly." },
      { role: "user", content: "Say hello to the benchmark in one short sentence." },
    ],
    max_tokens: 64,
    temperature: 0.2,
    ...(stream ? { stream: true } : {}),
  });
}

export async function startBenchGateway(options: BenchGatewayOptions): Promise<BenchGateway> {
  const gateway = await startLocalGateway({
    ...process.env,
    PORT: "0",
    HOST: "127.0.0.1",
    GATEWAY_DATA_DIR: options.dataDir,
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1",
    ...options.env,
  });
  const { organisationId, defaultWorkspaceId, adminApiKey } = gateway.bootstrap;
  const key = await createApiKey(gateway.services.stores.records, {
    organisationId,
    workspaceId: defaultWorkspaceId,
    name: "benchmark",
    keyType: "workspace",
    keySubType: "service",
    workspaceRole: "member",
    scopes: ["*"],
  });

  const features: Record<string, string> = { auth: "on (workspace API key)" };
  features.rateLimit = options.rateLimit
    ? await enableRateLimit(gateway.url, adminApiKey!, defaultWorkspaceId, key.id)
    : "off (not requested; run with --rate-limit)";
  features.logging = "gateway default (see store writes per request)";

  return {
    url: gateway.url,
    gateway,
    apiKey: key.secret,
    features,
    requestHeaders(mockUrl, paced = false) {
      return {
        "content-type": "application/json",
        authorization: `Bearer ${BENCH_PROVIDER_KEY}`,
        "x-gateway-api-key": key.secret,
        "x-gateway-provider": "openai",
        "x-gateway-custom-host": `${mockUrl}${paced ? "/paced" : ""}/v1`,
      };
    },
    close: () => gateway.close(),
  };
}

/**
 * One rate-limit policy on the benchmark's workspace, far above what the run can send (every request is
 * checked and counted, none refused). Returns the feature's state for the report.
 */
async function enableRateLimit(url: string, adminKey: string, workspaceId: string, keyId: string): Promise<string> {
  const response = await fetch(`${url}/v2/policies/rate-limits`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-gateway-api-key": adminKey },
    body: JSON.stringify({
      name: "benchmark",
      workspace_id: workspaceId,
      conditions: [{ key: "workspace_id", value: workspaceId }],
      group_by: [{ key: "api_key" }],
      type: "requests",
      unit: "rpm",
      value: 1_000_000_000,
      key_id: keyId,
    }),
  }).catch((error: Error) => ({ status: 0, text: async () => error.message }));
  const text = await response.text();
  if (response.status >= 200 && response.status < 300) return "on (one requests-per-minute policy, never reached)";
  return `unavailable (POST /v2/policies/rate-limits answered ${response.status}${response.status === 404 ? ": no policies yet" : `: ${text.slice(0, 120)}`})`;
}

function parseEnvList(value: string | undefined): Record<string, string> {
  const env: Record<string, string> = {};
  for (const pair of (value ?? "").split(",")) {
    const eq = pair.indexOf("=");
    if (eq > 0) env[pair.slice(0, eq).trim()] = pair.slice(eq + 1).trim();
  }
  return env;
}

// Run as a process: the entry itself, or the bundle that the build's launcher (scripts/build-folders.ts) imports.
if (import.meta.main || /gateway-server\.m?[jt]s$/.test(process.argv[1] ?? "")) {
  const flags = parseFlags(process.argv.slice(2));
  const dataDir = mkdtempSync(join(tmpdir(), "bench-gateway-"));
  const bench = await startBenchGateway({
    dataDir,
    rateLimit: flagOn(flags, "rate-limit"),
    env: parseEnvList(flags["gateway-env"]),
  });
  // Counting is one increment per store call (no item sizing): cheap next to the SQLite call it wraps.
  const counter = flagOn(flags, "count-store-ops")
    ? instrumentStores(bench.gateway.services.stores, { sizes: false })
    : undefined;
  let requests = 0;
  bench.gateway.server.server.on("request", () => requests++);
  printReady({ url: bench.url, pid: process.pid, apiKey: bench.apiKey, features: bench.features });
  let stopping = false;
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.on(signal, () => {
      if (stopping) return;
      stopping = true;
      const usage = process.memoryUsage();
      const memory = Object.fromEntries(Object.entries(usage).map(([name, bytes]) => [name, bytes / 2 ** 20]));
      bench
        .close()
        .then(() => {
          // Log writes the breaker skipped or that failed: a run that dropped logs did less work per request.
          const droppedLogs = bench.gateway.services.logger.breaker.dropped;
          const heldRequests = bench.gateway.logGate?.heldRequests;
          process.stdout.write(
            `${JSON.stringify({ final: true, requests, memory, droppedLogs, heldRequests, storeOps: counter?.counts() })}\n`,
          );
        })
        .catch((error) => console.error("close failed", error))
        .finally(() => {
          rmSync(dataDir, { recursive: true, force: true });
          process.exit(0);
        });
    });
  }
}

/**
 * Log search under a hostile tenant (issue 38): `node bench/log-search.ts [--logs=200000] [--parallel=20]
 * [--seconds=10] [--limit-seconds=120]`. Seeds a data folder with that many request logs straight through the log
 * sink (test/helpers/seeded-logs.ts), starts the `npm start` bundle on it, and measures, with workspace A's key:
 *   1. one filtered search alone, for two shapes: `model=nope` (no log matches) and `min_cost=999` (no index
 *      holds cost: the search reads as much as a call may), with /health probed meanwhile;
 *   2. `--parallel` searchers looping over the heavy shapes (HEAVY_SEARCHES) for `--seconds`, while /health is
 *      probed every 10 ms and workspace B writes a custom log every 25 ms (POST /v1/logs answers 201 only once
 *      the log is stored).
 * Reports search times, /health p50/p99/max, B's writes stored and refused, and the gateway's dropped log writes
 * (its circuit breaker). A request gives up after `--limit-seconds`. A script, not a test: it reports, never
 * fails on a timing. It only writes logs through the sink and calls HTTP routes, so it measures older versions
 * of the gateway too.
 */
import { rmSync } from "node:fs";
import { parseArgs } from "node:util";
import { removeBuiltBundle, startBundleGateway } from "../test/helpers/bundle-gateway.ts";
import { HEAVY_SEARCHES, seedLogsDataDir } from "../test/helpers/seeded-logs.ts";

const { values } = parseArgs({
  options: {
    logs: { type: "string", default: "200000" },
    parallel: { type: "string", default: "20" },
    seconds: { type: "string", default: "10" },
    "limit-seconds": { type: "string", default: "120" },
  },
});
const logCount = Number(values.logs);
const parallel = Number(values.parallel);
const loadMs = Number(values.seconds) * 1000;
const limitMs = Number(values["limit-seconds"]) * 1000;

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((x, y) => x - y);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number) => `${value.toFixed(1)} ms`;
const spread = (values: number[]) =>
  `p50 ${ms(percentile(values, 50))}, p99 ${ms(percentile(values, 99))}, max ${ms(Math.max(...values))}`;

const seedStart = performance.now();
const seeded = await seedLogsDataDir(logCount);
console.log(`seeded ${logCount} logs in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`);
const gateway = await startBundleGateway(
  { ENABLE_PROMETHEUS: "true" },
  { dataDir: seeded.dataDir, adminKey: seeded.adminKey },
);

/** One search with A's key: how long it took and what it answered (a status, or the error's name). */
async function search(query: string): Promise<{ ms: number; status: number | string; rows?: number }> {
  const begun = performance.now();
  try {
    const response = await fetch(`${gateway.url}/v1/logs${query}`, {
      headers: { "x-gateway-api-key": seeded.a.key },
      signal: AbortSignal.timeout(limitMs),
    });
    const body = (await response.json()) as { data?: unknown[] };
    return { ms: performance.now() - begun, status: response.status, rows: body.data?.length };
  } catch (error) {
    return { ms: performance.now() - begun, status: (error as Error).name };
  }
}

/** Sequential /health probes every 10 ms until stopped; a probe the server dropped counts with its time. */
function probeHealth() {
  const latencies: number[] = [];
  let failures = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const begun = performance.now();
      await fetch(`${gateway.url}/health`, { signal: AbortSignal.timeout(limitMs) })
        .then((response) => response.text())
        .catch(() => failures++);
      latencies.push(performance.now() - begun);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  return {
    async stop() {
      running = false;
      await done;
      return { latencies, failures };
    },
  };
}

/** Workspace B writes a custom log every 25 ms until stopped. */
function tenantBWrites() {
  const answers: Array<Promise<{ status: number; ms: number }>> = [];
  const timer = setInterval(() => {
    const begun = performance.now();
    answers.push(
      fetch(`${gateway.url}/v1/logs`, {
        method: "POST",
        headers: { "x-gateway-api-key": seeded.b.key, "content-type": "application/json" },
        body: JSON.stringify({ request: { body: { model: "b-model" } }, response: { status: 200 } }),
        signal: AbortSignal.timeout(limitMs),
      })
        .then((response) => ({ status: response.status, ms: performance.now() - begun }))
        .catch(() => ({ status: 0, ms: performance.now() - begun })),
    );
  }, 25);
  return {
    async stop() {
      clearInterval(timer);
      return Promise.all(answers);
    },
  };
}

async function breaker(): Promise<string> {
  try {
    const text = await (await fetch(`${gateway.url}/metrics`, { signal: AbortSignal.timeout(limitMs) })).text();
    const metric = (name: string) => new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, "m").exec(text)?.[1] ?? "?";
    return `dropped log writes ${metric("gateway_log_store_dropped_writes")}, breaker open ${metric("gateway_log_store_circuit_open")}`;
  } catch (error) {
    return `metrics unanswered (${(error as Error).name})`;
  }
}

try {
  for (let i = 0; i < 5; i++) await fetch(`${gateway.url}/health`);
  for (const query of ["?limit=10&model=nope", "?limit=100&min_cost=999"]) {
    const probe = probeHealth();
    const alone = await search(query);
    const health = await probe.stop();
    console.log(
      `one search ${query}: ${ms(alone.ms)} (${alone.status}, ${alone.rows ?? "-"} rows); ` +
        `/health meanwhile ${spread(health.latencies)}${health.failures ? `, ${health.failures} failed` : ""}`,
    );
  }

  const probe = probeHealth();
  const writes = tenantBWrites();
  const times: number[] = [];
  const statuses = new Map<string, number>();
  const until = performance.now() + loadMs;
  const searcher = async (offset: number) => {
    for (let i = 0; performance.now() < until; i++) {
      const result = await search(HEAVY_SEARCHES[(offset + i) % HEAVY_SEARCHES.length]!);
      times.push(result.ms);
      statuses.set(String(result.status), (statuses.get(String(result.status)) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: parallel }, (_, i) => searcher(i)));
  const health = await probe.stop();
  const written = await writes.stop();
  const stored = written.filter((answer) => answer.status === 201).length;
  console.log(
    `${parallel} searchers for ${values.seconds} s: ${times.length} searches (${[...statuses].map(([status, n]) => `${n}x ${status}`).join(", ")}), ${spread(times)}`,
  );
  console.log(
    `/health meanwhile: ${health.latencies.length} probes, ${spread(health.latencies)}` +
      `${health.failures ? `, ${health.failures} failed` : ""}`,
  );
  console.log(
    `workspace B: ${written.length} custom logs sent, ${stored} stored (201), ${written.length - stored} refused or ` +
      `unanswered; write ${spread(written.map((answer) => answer.ms))}; ${await breaker()}`,
  );
} finally {
  await gateway.close();
  await removeBuiltBundle();
  rmSync(seeded.dataDir, { recursive: true, force: true });
}

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFlags } from "./lib/cli.ts";
import { instrumentStores, type StoreOpCounts } from "./lib/store-counter.ts";
import { startMockUpstream } from "./mock-upstream.ts";
import { benchRequest, startBenchGateway } from "./gateway-server.ts";

/**
 * Store operations per request: a counting wrapper around the storage ports (Records, Counters, Blobs, Queue,
 * Secrets; bench/lib/store-counter.ts), installed on the live Stores object of a running local gateway, so every caller (authenticator,
 * pipeline, logging, limits) is counted however it got hold of the port. Real HTTP requests through the real
 * local gateway; the AWS adapters implement the same ports, so the counts are what DynamoDB/S3/SQS would see.
 *
 * `node bench/store-ops.ts [--requests=50]` prints the table and a JSON line.
 */

export interface StoreOpsResult {
  requests: number;
  /** First authenticated request after start (caches cold). */
  cold: StoreOpCounts;
  /** Per warm request (averages over `requests`), non-streaming and streaming. */
  warm: { json: PerRequest; stream: PerRequest };
  features: Record<string, string>;
}

export interface PerRequest {
  reads: number;
  writes: number;
  other: number;
  byMethod: Record<string, number>;
  /** Estimated DynamoDB write request units (see StoreOpCounts.writeUnits) and record bytes written. */
  writeUnits: number;
  recordBytes: number;
}

function perRequest(counts: StoreOpCounts, n: number): PerRequest {
  const byMethod: Record<string, number> = {};
  for (const [name, count] of Object.entries(counts.byMethod)) byMethod[name] = count / n;
  return {
    reads: counts.reads / n,
    writes: counts.writes / n,
    other: counts.other / n,
    byMethod,
    writeUnits: counts.writeUnits / n,
    recordBytes: counts.recordBytes / n,
  };
}

async function send(url: string, headers: Record<string, string>, stream: boolean): Promise<void> {
  const response = await fetch(`${url}/v1/chat/completions`, { method: "POST", headers, body: benchRequest(stream) });
  const text = await response.text();
  if (response.status !== 200) throw new Error(`gateway answered ${response.status}: ${text.slice(0, 300)}`);
}

/** Lets `waitUntil` work and stream-end bookkeeping (logs, counters) land before counting. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 150));

export async function measureStoreOps(
  options: { requests?: number; rateLimit?: boolean; env?: Record<string, string> } = {},
): Promise<StoreOpsResult> {
  const n = options.requests ?? 50;
  const mock = await startMockUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-store-ops-"));
  const gateway = await startBenchGateway({ dataDir, rateLimit: options.rateLimit, env: options.env });
  try {
    // The local queue worker polls its queue every second: background, not per request (no such poll on AWS).
    await gateway.gateway.worker.stop();
    const counter = instrumentStores(gateway.gateway.services.stores);
    const headers = gateway.requestHeaders(mock.url);

    counter.reset();
    await send(gateway.url, headers, false);
    await settle();
    const cold = counter.counts();

    // Warm both paths (caches, and the analytics index records written the first time a value is seen in a
    // day), then count.
    for (let i = 0; i < 20; i++) {
      await send(gateway.url, headers, false);
      await send(gateway.url, headers, true);
    }
    await settle();
    counter.reset();
    for (let i = 0; i < n; i++) await send(gateway.url, headers, false);
    await settle();
    const json = perRequest(counter.counts(), n);
    counter.reset();
    for (let i = 0; i < n; i++) await send(gateway.url, headers, true);
    await settle();
    const stream = perRequest(counter.counts(), n);
    return { requests: n, cold, warm: { json, stream }, features: gateway.features };
  } finally {
    await gateway.close();
    await mock.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export function formatStoreOps(result: StoreOpsResult): string {
  const fmt = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(value > 100 ? 0 : 2));
  const methods = (byMethod: Record<string, number>) =>
    Object.entries(byMethod)
      .map(([name, count]) => `${name}=${fmt(count)}`)
      .join(", ") || "-";
  const lines = [
    `Store operations per request (chat completion with API-key auth; ${result.requests} warm requests each):`,
    `  cold (first request):  reads ${result.cold.reads}, writes ${result.cold.writes}, other ${result.cold.other}   [${methods(result.cold.byMethod)}]`,
    `  warm non-streaming:    reads ${fmt(result.warm.json.reads)}, writes ${fmt(result.warm.json.writes)}   [${methods(result.warm.json.byMethod)}]; records written ${fmt(result.warm.json.recordBytes)} bytes = ~${fmt(result.warm.json.writeUnits)} DynamoDB WRU (with the gsi1 copy)`,
    `  warm streaming:        reads ${fmt(result.warm.stream.reads)}, writes ${fmt(result.warm.stream.writes)}   [${methods(result.warm.stream.byMethod)}]; records written ${fmt(result.warm.stream.recordBytes)} bytes = ~${fmt(result.warm.stream.writeUnits)} DynamoDB WRU`,
    `  features: ${Object.entries(result.features)
      .map(([name, state]) => `${name}: ${state}`)
      .join("; ")}`,
  ];
  const warm = result.warm.json;
  lines.push(
    `  target (0 reads, <= 2 writes warm): ${warm.reads === 0 && warm.writes <= 2 && result.warm.stream.reads === 0 && result.warm.stream.writes <= 2 ? "MET" : "NOT MET"}`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  const result = await measureStoreOps({
    requests: Number(flags.requests ?? 50),
    rateLimit: flags["rate-limit"] !== undefined,
  });
  console.log(formatStoreOps(result));
  console.log(JSON.stringify(result));
}

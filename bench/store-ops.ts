import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DynamoStreamRecord } from "../core/platform/aws/analytics-stream-handler.ts";
import { createAnalyticsStreamHandler } from "../core/platform/aws/analytics-stream-handler.ts";
import { layoutLog } from "../core/logs/log-layout.ts";
import { marshallItem } from "../core/platform/aws/dynamo-values.ts";
import { createLocalStores } from "../core/platform/local/local-stores.ts";
import type { Services } from "../core/services.ts";
import type { RecordItem } from "../core/store/ports.ts";
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
 * Two platform configurations, both on the same local stores (only what the code path writes differs):
 * - local: analytics counted as each log is written, summed in memory and flushed each second;
 * - AWS (GATEWAY_PLATFORM=aws, as services-from-env.ts sets it up): the request path writes no analytics, the
 *   analytics stream worker counts the logs from the table's DynamoDB stream. Its writes are measured by
 *   feeding the logs the requests wrote, as stream INSERT records, to the worker's handler in batches of
 *   `--batch` (default 100) and reported per log, apart from the request path. For comparison, `before`
 *   is the AWS request path as it was without the stream worker (analytics written at once, per request).
 *
 * `node bench/store-ops.ts [--requests=50] [--batch=100] [--rate-limit]` prints the table and a JSON line.
 */

export interface StoreOpsResult {
  requests: number;
  /** First authenticated request after start (caches cold). */
  cold: StoreOpCounts;
  /** Per warm request (averages over `requests`), non-streaming and streaming: the local platform. */
  warm: { json: PerRequest; stream: PerRequest };
  /** The AWS configuration (Lambda + DynamoDB). */
  aws?: AwsStoreOps;
  features: Record<string, string>;
}

export interface AwsStoreOps {
  /** Per warm request on the request path (a data-plane Lambda): analytics come from the stream. */
  requestPath: { json: PerRequest; stream: PerRequest };
  /** The analytics stream worker's operations, amortised per log, in batches of `batchSize` logs. */
  worker: PerRequest & { batchSize: number; logs: number; batches: number };
  /** Before the stream worker: analytics counted on the request path and written at once. */
  before: { json: PerRequest; stream: PerRequest };
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

interface PathCounts {
  cold: StoreOpCounts;
  json: PerRequest;
  stream: PerRequest;
  /** Request-log records (pk `LOG#<id>`) written while warming up and while counting, in write order. */
  logs: { warmup: RecordItem[]; measured: RecordItem[] };
  features: Record<string, string>;
}

/** Store operations of a gateway on the local stores, `configure`d like a platform before the first request. */
async function measurePath(
  n: number,
  options: { rateLimit?: boolean; env?: Record<string, string> },
  configure: (services: Services) => void = () => {},
): Promise<PathCounts> {
  const mock = await startMockUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), "bench-store-ops-"));
  const gateway = await startBenchGateway({ dataDir, rateLimit: options.rateLimit, env: options.env });
  try {
    // The local queue worker polls its queue every second: background, not per request (no such poll on AWS).
    await gateway.gateway.worker.stop();
    configure(gateway.gateway.services);
    const stores = gateway.gateway.services.stores;
    const counter = instrumentStores(stores);
    // Request logs, as their record is laid out on every platform (the stream worker below reads that record).
    let logs: RecordItem[] = [];
    const sink = stores.logSink;
    const write = sink.write;
    sink.write = function (this: unknown, entry) {
      const { item } = layoutLog(entry);
      // Analytics read no bodies (and deferred ones are not plain values to copy).
      logs.push(structuredClone({ ...item, requestBody: undefined, responseBody: undefined }));
      return write.call(this, entry);
    };
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
    const warmup = logs;
    logs = [];
    counter.reset();
    for (let i = 0; i < n; i++) await send(gateway.url, headers, false);
    await settle();
    const json = perRequest(counter.counts(), n);
    counter.reset();
    for (let i = 0; i < n; i++) await send(gateway.url, headers, true);
    await settle();
    const stream = perRequest(counter.counts(), n);
    return { cold, json, stream, logs: { warmup, measured: logs }, features: gateway.features };
  } finally {
    await gateway.close();
    await mock.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The analytics stream worker's operations per log: the logs as stream INSERT records (NewImage as DynamoDB
 * would hold the item), in batches of `batchSize`, through the worker's handler, on fresh local stores. The
 * warm-up logs go first, uncounted, so the day's index records exist (as on a warm day).
 */
async function measureStreamWorker(
  logs: { warmup: RecordItem[]; measured: RecordItem[] },
  batchSize: number,
): Promise<AwsStoreOps["worker"]> {
  const dataDir = mkdtempSync(join(tmpdir(), "bench-stream-worker-"));
  const stores = createLocalStores({ dataDir, publicBaseUrl: "http://127.0.0.1:1" });
  try {
    const handler = createAnalyticsStreamHandler(async () => stores);
    let sequence = 10n ** 20n;
    const run = async (items: RecordItem[]) => {
      let batches = 0;
      for (let start = 0; start < items.length; start += batchSize, batches++) {
        const records: DynamoStreamRecord[] = items.slice(start, start + batchSize).map((item) => {
          sequence += 1n;
          return {
            eventID: `event-${sequence}`,
            eventName: "INSERT",
            eventSource: "aws:dynamodb",
            dynamodb: {
              Keys: marshallItem({ pk: item.pk, sk: item.sk }),
              NewImage: marshallItem(item),
              SequenceNumber: String(sequence),
              StreamViewType: "NEW_IMAGE",
            },
          };
        });
        const response = await handler({ Records: records });
        if (response.batchItemFailures.length > 0) throw new Error("the stream worker failed a batch");
      }
      return batches;
    };
    await run(logs.warmup);
    const counter = instrumentStores(stores);
    const batches = await run(logs.measured);
    const logCount = Math.max(1, logs.measured.length);
    return { ...perRequest(counter.counts(), logCount), batchSize, logs: logs.measured.length, batches };
  } finally {
    await stores.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function measureStoreOps(
  options: { requests?: number; rateLimit?: boolean; env?: Record<string, string>; batchSize?: number } = {},
): Promise<StoreOpsResult> {
  const n = options.requests ?? 50;
  const local = await measurePath(n, options);
  const awsEnv = { ...options.env, GATEWAY_PLATFORM: "aws" };
  // As core/platform/aws/services-from-env.ts sets up a Lambda's services.
  const aws = await measurePath(n, { ...options, env: awsEnv }, (services) => services.analytics.countLogsFromStream());
  const before = await measurePath(n, { ...options, env: awsEnv });
  const worker = await measureStreamWorker(aws.logs, options.batchSize ?? 100);
  return {
    requests: n,
    cold: local.cold,
    warm: { json: local.json, stream: local.stream },
    aws: {
      requestPath: { json: aws.json, stream: aws.stream },
      worker,
      before: { json: before.json, stream: before.stream },
    },
    features: local.features,
  };
}

export function formatStoreOps(result: StoreOpsResult): string {
  const fmt = (value: number) => (Number.isInteger(value) ? String(value) : value.toFixed(value > 100 ? 0 : 2));
  const methods = (byMethod: Record<string, number>) =>
    Object.entries(byMethod)
      .map(([name, count]) => `${name}=${fmt(count)}`)
      .join(", ") || "-";
  const row = (label: string, counts: PerRequest) =>
    `  ${label.padEnd(22)} reads ${fmt(counts.reads)}, writes ${fmt(counts.writes)}   [${methods(counts.byMethod)}]; records written ${fmt(counts.recordBytes)} bytes = ~${fmt(counts.writeUnits)} DynamoDB WRU`;
  const met = (paths: PerRequest[]) =>
    paths.every((path) => path.reads === 0 && path.writes <= 2) ? "MET" : "NOT MET";
  const lines = [
    `Store operations per request (chat completion with API-key auth; ${result.requests} warm requests each):`,
    "local platform (analytics summed in memory, flushed each second):",
    `  cold (first request):  reads ${result.cold.reads}, writes ${result.cold.writes}, other ${result.cold.other}   [${methods(result.cold.byMethod)}]`,
    row("warm non-streaming:", result.warm.json),
    row("warm streaming:", result.warm.stream),
    `  target (0 reads, <= 2 writes warm): ${met([result.warm.json, result.warm.stream])} (sequential requests: each once-a-second analytics flush is shared by the few requests of that second; under load it is spread thinner, see "store operations per request under load" above)`,
  ];
  const aws = result.aws;
  if (aws) {
    lines.push(
      "AWS (Lambda + DynamoDB; analytics from the table's stream):",
      row("request path, json:", aws.requestPath.json),
      row("request path, stream:", aws.requestPath.stream),
      `  target (request path: 0 reads, <= 2 writes warm): ${met([aws.requestPath.json, aws.requestPath.stream])}`,
      row(`stream worker, per log:`, aws.worker),
      `    (${aws.worker.logs} logs in ${aws.worker.batches} batches of up to ${aws.worker.batchSize}; off the request path, amortised per log)`,
      "  before (no stream worker: analytics written on the request path at once):",
      row("  json:", aws.before.json),
      row("  stream:", aws.before.stream),
    );
  }
  lines.push(
    `  features: ${Object.entries(result.features)
      .map(([name, state]) => `${name}: ${state}`)
      .join("; ")}`,
  );
  return lines.join("\n");
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  const result = await measureStoreOps({
    requests: Number(flags.requests ?? 50),
    rateLimit: flags["rate-limit"] !== undefined,
    batchSize: Number(flags.batch ?? 100),
  });
  console.log(formatStoreOps(result));
  console.log(JSON.stringify(result));
}

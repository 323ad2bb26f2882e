import { AWS_PRICES } from "./aws-prices.ts";
import { parseFlags } from "./lib/cli.ts";

/**
 * Estimated AWS cost per million chat requests from what the benchmark measured: the gateway's time per
 * request (Lambda GB-seconds), its store operations per warm request (DynamoDB request units, S3 and SQS
 * requests) and the chat bundle's init time (cold starts are billed since 2025-08). Prices: bench/aws-prices.ts.
 *
 * `node bench/aws-cost.ts --duration-ms=1.2 --reads=0 --writes=1 --write-units=4 [--init-ms=40] [--memory-mb=1024] [--arch=arm64]`
 */

export interface StoreOpsPerRequest {
  /** DynamoDB reads (records.get/query, counters.get/getMany): one RRU each (strongly consistent, <= 4 KB). */
  dynamoReads: number;
  /** DynamoDB writes (records.put/update/delete, counters.add/delete). */
  dynamoWrites: number;
  /** Their write request units (1 per KB, doubled for items in gsi1); defaults to one per write. */
  dynamoWriteUnits: number;
  /** S3 PUT/LIST-class requests (blobs.put, blobs.list). */
  s3Puts: number;
  /** S3 GET-class requests (blobs.get, blobs.head). */
  s3Gets: number;
  /** SQS requests (queue.*). */
  sqsRequests: number;
}

/** Maps counted port calls ("records.get" -> calls per request) to AWS requests. */
export function awsRequestsOf(byMethod: Record<string, number>, writeUnits?: number): StoreOpsPerRequest {
  const count = (...names: string[]) => names.reduce((sum, name) => sum + (byMethod[name] ?? 0), 0);
  // On AWS, request logs are items of the one table (the local platform gives them a port of their own: `logs.*`).
  const dynamoWrites = count(
    "records.put",
    "records.update",
    "records.delete",
    "logs.put",
    "logs.update",
    "logs.delete",
    // A request log with its search index items: one BatchWriteItem (billed by the units of every item).
    "logs.write",
    "counters.add",
    "counters.delete",
  );
  return {
    dynamoReads: count(
      "records.get",
      "records.query",
      "logs.get",
      "logs.query",
      "logs.search",
      "counters.get",
      "counters.getMany",
    ),
    dynamoWrites,
    dynamoWriteUnits: writeUnits ?? dynamoWrites,
    s3Puts: count("blobs.put", "blobs.list"),
    s3Gets: count("blobs.get", "blobs.head"),
    sqsRequests: count("queue.send", "queue.sendBatch", "queue.receive", "queue.ack", "queue.release"),
  };
}

export interface CostScenario {
  name: string;
  /** Billed Lambda duration per request, ms. */
  billedMs: number;
  ops: StoreOpsPerRequest;
}

export interface CostLine {
  scenario: string;
  billedMs: number;
  /** USD per million requests. */
  lambdaRequests: number;
  lambdaDuration: number;
  lambdaInit: number;
  dynamodb: number;
  s3: number;
  sqs: number;
  router: number;
  total: number;
}

export interface CostOptions {
  memoryMb: number;
  architecture: "arm64" | "x86_64";
  /** Module init of the function, ms, billed once per cold start. */
  initMs: number;
  /** Share of requests that start a new execution environment (AWS: typically under 1%). */
  coldStartRate: number;
  /** Include the Router's CloudFront request price. */
  router: boolean;
}

export const DEFAULT_COST_OPTIONS: CostOptions = {
  memoryMb: 1024, // infra/api.ts: data-plane families
  architecture: "arm64", // infra/gateway-runtime.ts
  initMs: 50,
  coldStartRate: 0.01,
  router: true,
};

/**
 * Lambda gives a function CPU in proportion to memory: one full vCPU at 1,769 MB. Gateway work is CPU-bound,
 * so time measured here on a full core is scaled by 1769 / memory for a smaller function.
 */
export const cpuScale = (memoryMb: number) => Math.max(1, 1769 / memoryMb);

export function costPerMillion(scenario: CostScenario, options: CostOptions = DEFAULT_COST_OPTIONS): CostLine {
  const p = AWS_PRICES;
  const million = 1_000_000;
  const gb = options.memoryMb / 1024;
  const gbSecond = p.lambda.gbSecond[options.architecture];
  const billedMs = Math.ceil(scenario.billedMs / p.lambda.billingGranularityMs) * p.lambda.billingGranularityMs;
  const lambdaRequests = p.lambda.request * million;
  const lambdaDuration = (billedMs / 1000) * gb * gbSecond * million;
  const lambdaInit = p.lambda.initBilled
    ? options.coldStartRate * (options.initMs / 1000) * gb * gbSecond * million
    : 0;
  const dynamodb =
    (scenario.ops.dynamoReads * p.dynamodb.readRequestUnit +
      scenario.ops.dynamoWriteUnits * p.dynamodb.writeRequestUnit) *
    million;
  const s3 = (scenario.ops.s3Puts * p.s3.put + scenario.ops.s3Gets * p.s3.get) * million;
  const sqs = scenario.ops.sqsRequests * p.sqs.request * million;
  const router = options.router ? p.cloudfront.httpsRequest * million : 0;
  return {
    scenario: scenario.name,
    billedMs,
    lambdaRequests,
    lambdaDuration,
    lambdaInit,
    dynamodb,
    s3,
    sqs,
    router,
    total: lambdaRequests + lambdaDuration + lambdaInit + dynamodb + s3 + sqs + router,
  };
}

/**
 * A DynamoDB/S3 write inside the invocation (the log is written through waitUntil, after the answer, but
 * before the invocation ends, so Lambda bills the wait): a typical in-region PutItem, in ms. An assumption.
 */
export const STORE_WRITE_MS = 5;

/**
 * The scenarios the report prints: the gateway alone (mock upstream, so duration is our own time), the same
 * with realistic model latencies (Lambda bills the wall time spent waiting for the provider), with the
 * rate-limit counter the targets assume (+1 write), and with bodies over the inline limit going to S3.
 */
export function standardScenarios(
  measured: {
    overheadMs: number;
    ops: StoreOpsPerRequest /** The measured requests already wrote a rate-limit counter. */;
    counterMeasured?: boolean;
  },
  options: CostOptions = DEFAULT_COST_OPTIONS,
): CostScenario[] {
  const writesMs = (ops: StoreOpsPerRequest) => (ops.dynamoWrites + ops.s3Puts > 0 ? STORE_WRITE_MS : 0); // written in parallel
  const own = measured.overheadMs * cpuScale(options.memoryMb);
  const ops = measured.ops;
  const withCounter: StoreOpsPerRequest = {
    ...ops,
    dynamoWrites: ops.dynamoWrites + 1,
    dynamoWriteUnits: ops.dynamoWriteUnits + 1,
  };
  const withS3: StoreOpsPerRequest = { ...withCounter, s3Puts: withCounter.s3Puts + 1 };
  const measuredRows: CostScenario[] = [
    { name: "measured: gateway time only (mock upstream)", billedMs: own + writesMs(ops), ops },
    { name: "measured + 1 s model latency", billedMs: own + writesMs(ops) + 1000, ops },
    { name: "measured + 10 s model latency", billedMs: own + writesMs(ops) + 10_000, ops },
  ];
  if (measured.counterMeasured) {
    const bodiesToS3: StoreOpsPerRequest = { ...ops, s3Puts: ops.s3Puts + 1 };
    return [
      ...measuredRows,
      {
        name: "+ log bodies > 16 KB to S3 (projected), 1 s latency",
        billedMs: own + writesMs(bodiesToS3) + 1000,
        ops: bodiesToS3,
      },
    ];
  }
  return [
    ...measuredRows,
    {
      name: "+ rate-limit counter (projected), 1 s model latency",
      billedMs: own + writesMs(withCounter) + 1000,
      ops: withCounter,
    },
    {
      name: "+ counter, log bodies > 16 KB to S3 (projected), 1 s latency",
      billedMs: own + writesMs(withS3) + 1000,
      ops: withS3,
    },
  ];
}

export function formatCost(lines: CostLine[], options: CostOptions = DEFAULT_COST_OPTIONS): string {
  const usd = (value: number) => `$${value < 10 ? value.toFixed(3) : value.toFixed(2)}`.padStart(9);
  const header = `  ${"scenario".padEnd(62)} ${"billed".padStart(8)} ${"λ req".padStart(9)} ${"λ GB-s".padStart(9)} ${"λ init".padStart(9)} ${"DynamoDB".padStart(9)} ${"S3".padStart(9)} ${"SQS".padStart(9)} ${"Router".padStart(9)} ${"TOTAL".padStart(9)}`;
  return [
    `Estimated AWS cost per 1M chat requests (${AWS_PRICES.region}, ${options.architecture}, ${options.memoryMb} MB, list prices checked ${AWS_PRICES.checked}; bench/aws-prices.ts):`,
    `  assumptions: gateway time scaled x${cpuScale(options.memoryMb).toFixed(2)} for ${options.memoryMb} MB (1 vCPU = 1769 MB); ${(options.coldStartRate * 100).toFixed(1)}% cold starts x ${options.initMs.toFixed(0)} ms init; 1 RRU per read; WRU from the item sizes written (gsi1 copy included); +${STORE_WRITE_MS} ms billed when the invocation writes to a store`,
    header,
    ...lines.map(
      (line) =>
        `  ${line.scenario.padEnd(62)} ${`${line.billedMs} ms`.padStart(8)} ${usd(line.lambdaRequests)} ${usd(line.lambdaDuration)} ${usd(line.lambdaInit)} ${usd(line.dynamodb)} ${usd(line.s3)} ${usd(line.sqs)} ${usd(line.router)} ${usd(line.total)}`,
    ),
  ].join("\n");
}

if (import.meta.main) {
  const flags = parseFlags(process.argv.slice(2));
  const options: CostOptions = {
    ...DEFAULT_COST_OPTIONS,
    memoryMb: Number(flags["memory-mb"] ?? DEFAULT_COST_OPTIONS.memoryMb),
    architecture: (flags.arch as CostOptions["architecture"]) ?? DEFAULT_COST_OPTIONS.architecture,
    initMs: Number(flags["init-ms"] ?? DEFAULT_COST_OPTIONS.initMs),
  };
  const ops: StoreOpsPerRequest = {
    dynamoReads: Number(flags.reads ?? 0),
    dynamoWrites: Number(flags.writes ?? 0),
    dynamoWriteUnits: Number(flags["write-units"] ?? flags.writes ?? 0),
    s3Puts: Number(flags["s3-puts"] ?? 0),
    s3Gets: 0,
    sqsRequests: 0,
  };
  const scenarios = standardScenarios({ overheadMs: Number(flags["duration-ms"] ?? 1), ops }, options);
  console.log(
    formatCost(
      scenarios.map((scenario) => costPerMillion(scenario, options)),
      options,
    ),
  );
}

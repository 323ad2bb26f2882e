import { emulatorStores, lambdaEnv } from "../helpers/aws-stores.ts";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { AnalyticsReader, type AnalyticsFilter, type Metric, type Totals } from "../../core/analytics/reader.ts";
import { AnalyticsRecorder } from "../../core/analytics/recorder.ts";
import { journalKey } from "../../core/analytics/log-batch.ts";
import type { RequestLog } from "../../core/logs/log-record.ts";
import { RequestLogger } from "../../core/logs/request-logger.ts";
import {
  createAnalyticsStreamHandler,
  type DynamoStreamEvent,
  type DynamoStreamRecord,
  requestLogOf,
} from "../../core/platform/aws/analytics-stream-handler.ts";
import type { AttributeMap } from "../../core/platform/aws/dynamo-values.ts";
import { createLocalStores } from "../../core/platform/local/local-stores.ts";
import { type Counters, StoreUnavailableError, type Stores } from "../../core/store/ports.ts";
import { createTable } from "../setup/emulators.ts";

/**
 * The analytics stream worker (AWS) against dynalite: request logs written by the real RequestLogger, read
 * back as DynamoDB stores them (a raw GetItem: the NewImage a stream record carries), delivered as stream
 * events, must give exactly the analytics the local request path gives for the same logs, read through the
 * same AnalyticsReader. Each test uses its own organisation, so tests share the table without seeing each
 * other's aggregates.
 */

const emulators = inject("emulators");
let aws: Stores;
let local: Stores;
let dataDir: string;
let logger: RequestLogger;

beforeAll(() => {
  aws = emulatorStores(emulators);
  dataDir = mkdtempSync(join(tmpdir(), "analytics-stream-"));
  local = createLocalStores({ dataDir, publicBaseUrl: "http://127.0.0.1:1" });
  logger = new RequestLogger(aws.logSink, aws.blobs, {
    retentionDays: 30,
    threshold: 5,
    backoffMs: 1000,
    timeoutMs: 5000,
  });
});

afterAll(async () => {
  await aws?.close();
  await local?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

const HOUR = 3_600_000;

/** A mixed burst over the last three hours: workspaces, providers, users, metadata, errors, cache, custom logs. */
function sampleLogs(organisationId: string, count = 60): RequestLog[] {
  const now = Date.now();
  return Array.from({ length: count }, (_, index): RequestLog => {
    const custom = index % 17 === 5;
    const control = index % 23 === 7; // a control-plane call: logged, but not counted by analytics
    return {
      id: `log_${randomUUID()}`,
      createdAt: new Date(now - 3 * HOUR + index * ((3 * HOUR) / count)).toISOString(),
      traceId: `trace-${index}`,
      organisationId,
      workspaceId: index % 3 === 0 ? "ws_b" : "ws_a",
      apiKeyId: "key_1",
      userId: index % 4 === 0 ? `user-${index % 3}` : undefined,
      metadata: {
        team: index % 2 ? "odd" : "even",
        ...(index % 5 === 0 ? { _user: `meta-user-${index % 2}` } : {}),
        ...(index % 7 === 0 ? { env: "prod", region: "eu" } : {}),
      },
      method: "POST",
      route: custom ? "custom" : control ? "/v1/configs" : "/v1/chat/completions",
      path: custom ? "https://example.com/v1/chat" : "/v1/chat/completions",
      status: index % 9 === 4 ? 502 : 200,
      provider: ["openai", "anthropic", "bedrock"][index % 3],
      requestedModel: ["gpt-4o-mini", "claude-3-5-haiku", "nova-lite"][index % 3],
      answeredModel: ["gpt-4o-mini-2024-07-18", "claude-3-5-haiku", "nova-lite"][index % 3],
      stream: index % 2 === 0,
      cacheStatus: index % 8 === 3 ? "HIT" : index % 8 === 4 ? "MISS" : undefined,
      latencyMs: 20 + ((index * 37) % 900),
      timeToFirstTokenMs: 10,
      usage:
        index % 9 === 4
          ? undefined
          : { promptTokens: 10 + index, completionTokens: 3 * index, totalTokens: 10 + 4 * index, estimated: false },
      cost: index % 9 === 4 ? undefined : 0.000123 * (index + 1),
      error: index % 9 === 4 ? { message: "upstream failed", code: "upstream_error" } : undefined,
      headers: { "content-type": "application/json", "x-gateway-api-key": "***" },
      requestBody: { model: "m", messages: [{ role: "user", content: `hello ${index}` }] },
      responseBody: { id: `chatcmpl-${index}`, choices: [] },
      source: custom ? "custom" : "gateway",
    };
  });
}

/** The local request path: the recorder, fed each written log, flushed once a second (here: before reading). */
async function countLocally(logs: RequestLog[]): Promise<void> {
  const recorder = new AnalyticsRecorder(local.counters, local.records, { flushIntervalMs: 1000 });
  for (const log of logs) await recorder.record(log);
  await recorder.flush();
}

/** The item as DynamoDB holds it (typed attribute values): a raw GetItem, as a stream's NewImage shows it. */
async function rawItem(pk: string, sk: string, table = emulators.tableName): Promise<AttributeMap> {
  const response = await fetch(emulators.dynamodb, {
    method: "POST",
    headers: {
      "content-type": "application/x-amz-json-1.0",
      "x-amz-target": "DynamoDB_20120810.GetItem",
      "x-amz-date": "20250101T000000Z",
      authorization:
        "AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0",
    },
    body: JSON.stringify({ TableName: table, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true }),
  });
  const body = (await response.json()) as { Item?: AttributeMap };
  if (!body.Item) throw new Error(`no item ${pk} ${sk}`);
  return body.Item;
}

let sequence = 10n ** 20n * 4421584500n;

/** A stream record as Lambda delivers it (documented shape: eventName, dynamodb.Keys/NewImage/SequenceNumber). */
function streamRecord(eventName: "INSERT" | "MODIFY" | "REMOVE", image: AttributeMap): DynamoStreamRecord {
  sequence += 1000n + BigInt(Math.floor(Math.random() * 1000));
  return {
    eventID: randomUUID().replaceAll("-", ""),
    eventName,
    eventSource: "aws:dynamodb",
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: { pk: image.pk!, sk: image.sk! },
      ...(eventName === "REMOVE" ? {} : { NewImage: image }),
      SequenceNumber: String(sequence),
      SizeBytes: JSON.stringify(image).length,
      StreamViewType: "NEW_IMAGE",
    },
  };
}

/** Writes the logs through the RequestLogger into dynalite and returns their INSERT stream records. */
/**
 * Sample logs of a fresh organisation counted by the local request path, and the same logs under another fresh
 * organisation written to the table: the stream worker's result for `awsOrg` must equal the local one.
 */
async function countedLocallyAndWritten(
  count?: number,
): Promise<{ localOrg: string; awsOrg: string; logs: RequestLog[]; records: DynamoStreamRecord[] }> {
  const localOrg = `org_${randomUUID()}`;
  const awsOrg = `org_${randomUUID()}`;
  const logs = sampleLogs(localOrg, count);
  await countLocally(logs);
  return { localOrg, awsOrg, logs, records: await writeToTable(forOrganisation(logs, awsOrg)) };
}

async function writeToTable(logs: RequestLog[]): Promise<DynamoStreamRecord[]> {
  const records: DynamoStreamRecord[] = [];
  for (const log of logs) {
    expect(await logger.write(log)).toBe(true);
    records.push(streamRecord("INSERT", await rawItem(`LOG#${log.id}`, "LOG")));
  }
  return records;
}

const event = (records: DynamoStreamRecord[]): DynamoStreamEvent => ({ Records: records });

/** Everything the analytics API can show for an organisation, as plain data (latency sketches as arrays). */
/**
 * One end for every summary's windows, a little after any log this file writes: two summaries compared in a test
 * must cover the same hours even when the clock passes the hour between them (it did, once).
 */
const SUMMARY_END = Date.now() + 10 * 60_000;

async function summary(stores: Stores, organisationId: string) {
  const reader = new AnalyticsReader(stores.counters, stores.records);
  const now = SUMMARY_END;
  const metrics: Metric[] = ["requests", "cost", "tokens", "latency", "errors", "cache", "users", "feedback"];
  const plain = (totals: Totals) => ({ ...totals, latency: [...totals.latency].sort((a, b) => a[0] - b[0]) });
  const series = async (filter: AnalyticsFilter) => {
    const result = await reader.series(filter, metrics);
    return result.buckets.map((bucket) => ({ start: bucket.start, totals: plain(bucket.totals) }));
  };
  const recent: AnalyticsFilter = { organisationId, from: now - 4 * HOUR, to: now };
  const month: AnalyticsFilter = { organisationId, from: now - 30 * 24 * HOUR, to: now };
  const groups = async (group: "model" | "provider" | "workspace" | "user" | "metadata", key?: string) =>
    (await reader.groups(month, group, key)).map(([name, totals]) => [name, plain(totals)]);
  return {
    hourly: await series(recent),
    hourlyWorkspace: await series({ ...recent, workspaceId: "ws_b" }),
    hourlyModel: await series({ ...recent, model: "claude-3-5-haiku", provider: "anthropic" }),
    daily: await series(month),
    users: await reader.distinctUsers(month),
    models: await groups("model"),
    providers: await groups("provider"),
    workspaces: await groups("workspace"),
    userGroups: await groups("user"),
    teams: await groups("metadata", "team"),
    envs: await groups("metadata", "env"),
  };
}

/** The same logs for another organisation (each test counts into its own key space). */
const forOrganisation = (logs: RequestLog[], organisationId: string) =>
  logs.map((log) => ({ ...log, id: `log_${randomUUID()}`, organisationId }));

const requestsOf = (result: Awaited<ReturnType<typeof summary>>) =>
  result.hourly.reduce((total, bucket) => total + bucket.totals.requests, 0);

/** Counters that fail while `failing(key)` holds, counting every add. */
function flakyCounters(counters: Counters, failing: (key: string, amount: number) => boolean) {
  const state = { adds: 0, failed: 0 };
  const wrapped: Counters = {
    add: async (key, amount, options) => {
      state.adds++;
      if (failing(key, amount)) {
        state.failed++;
        throw new StoreUnavailableError("test: counters are down");
      }
      return counters.add(key, amount, options);
    },
    get: (key) => counters.get(key),
    getMany: (keys) => counters.getMany(keys),
    delete: (key) => counters.delete(key),
  };
  return { counters: wrapped, state };
}

describe("analytics stream worker", () => {
  it("counts stream batches into exactly the aggregates of the local request path", async () => {
    const { localOrg, awsOrg, logs, records } = await countedLocallyAndWritten();

    const handler = createAnalyticsStreamHandler(async () => aws);
    for (let start = 0; start < records.length; start += 25) {
      expect(await handler(event(records.slice(start, start + 25)))).toEqual({ batchItemFailures: [] });
    }

    const expected = await summary(local, localOrg);
    expect(requestsOf(expected)).toBe(logs.filter((log) => log.route !== "/v1/configs").length);
    expect(expected.users).toBeGreaterThan(0);
    expect(await summary(aws, awsOrg)).toEqual(expected);
  });

  it("gives the same aggregates however the logs are batched, writing each distinct counter once per batch", async () => {
    const orgs = [`org_${randomUUID()}`, `org_${randomUUID()}`];
    const logs = sampleLogs(orgs[0]!, 40);
    const one = await writeToTable(logs);
    const many = await writeToTable(forOrganisation(logs, orgs[1]!));

    const whole = flakyCounters(aws.counters, () => false);
    expect(await createAnalyticsStreamHandler(async () => ({ ...aws, counters: whole.counters }))(event(one))).toEqual({
      batchItemFailures: [],
    });
    const single = flakyCounters(aws.counters, () => false);
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: single.counters }));
    for (const record of many) expect(await handler(event([record]))).toEqual({ batchItemFailures: [] });

    expect(await summary(aws, orgs[1]!)).toEqual(await summary(aws, orgs[0]!));
    // One batch of 40 writes each distinct counter once; 40 batches of one write ~10 adds per log.
    expect(whole.state.adds).toBeLessThan(single.state.adds / 2);
  });

  it("writes a number of counters that does not grow with the batch for repeated traffic", async () => {
    const organisationId = `org_${randomUUID()}`;
    const base = Date.now() - 60_000;
    const logs = Array.from({ length: 100 }, (_, index): RequestLog => {
      const [sample] = sampleLogs(organisationId, 1);
      return {
        ...sample!,
        id: `log_${randomUUID()}`,
        createdAt: new Date(base + index * 100).toISOString(),
        workspaceId: "ws_a",
        userId: undefined,
        metadata: undefined,
        route: "/v1/chat/completions",
        source: "gateway",
        latencyMs: 120 + (index % 3),
      };
    });
    const records = await writeToTable(logs);
    const warm = flakyCounters(aws.counters, () => false);
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: warm.counters }));
    // The first batch of the day also admits and indexes the cell; the second is a warm one.
    await handler(event(records.slice(0, 50)));
    warm.state.adds = 0;
    expect(await handler(event(records.slice(50)))).toEqual({ batchItemFailures: [] });
    // 50 logs of one cell in one hour: day count + 9 hourly/daily totals (n, p, o, c, l hourly and daily).
    expect(warm.state.adds).toBeLessThanOrEqual(12);
  });

  it("ignores every record but the INSERT of a request log", async () => {
    const organisationId = `org_${randomUUID()}`;
    const [log] = sampleLogs(organisationId, 1);
    const [insert] = await writeToTable([{ ...log!, route: "/v1/chat/completions", source: "gateway" }]);
    const image = insert!.dynamodb!.NewImage!;
    const counted = flakyCounters(aws.counters, () => false);
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: counted.counters }));
    const noise = [
      streamRecord("MODIFY", image),
      streamRecord("REMOVE", image),
      streamRecord("INSERT", { pk: { S: `ANIDX#${organisationId}#2025-01-01` }, sk: { S: "w|ws_a" } }),
      streamRecord("INSERT", { pk: { S: "an|org|d2025-01-01|ws|*|*|n" }, sk: { S: "COUNTER" }, value: { N: "1" } }),
      streamRecord("INSERT", { pk: { S: "LOG#broken" }, sk: { S: "LOG" }, id: { S: "broken" } }),
    ];
    expect(await handler(event(noise))).toEqual({ batchItemFailures: [] });
    expect(counted.state.adds).toBe(0);
    expect(await handler(event([...noise, insert!]))).toEqual({ batchItemFailures: [] });
    expect(requestsOf(await summary(aws, organisationId))).toBe(1);
  });

  it("reads a stored log back from its NewImage as the log that was written (bodies and keys left out)", async () => {
    const [log] = sampleLogs(`org_${randomUUID()}`, 1);
    const [record] = await writeToTable([log!]);
    const { requestBody, responseBody, headers, ...rest } = log!;
    expect(requestLogOf(record!)).toEqual(JSON.parse(JSON.stringify(rest)));
  });

  it("reports a batch whose totals could not be written at its first record, and its retry completes it once", async () => {
    const { localOrg, awsOrg, records } = await countedLocallyAndWritten(30);
    const [first, rest] = [records.slice(0, 20), records.slice(20)];

    // Round 3's token and latency totals fail (after the in-process retries) in the first attempt.
    let down = true;
    const flaky = flakyCounters(aws.counters, (key) => down && /\|(p|l\d+)$/.test(key));
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: flaky.counters }), {
      retryDelaysMs: [1],
    });
    expect(await handler(event(first))).toEqual({
      batchItemFailures: [{ itemIdentifier: first[0]!.dynamodb!.SequenceNumber }],
    });
    expect(flaky.state.failed).toBeGreaterThan(0);
    const journal = journalKey(first[0]!.eventID!);
    expect(await aws.records.get(journal.pk, journal.sk)).toMatchObject({
      through: first.at(-1)!.dynamodb!.SequenceNumber,
    });

    // Lambda delivers the batch again from its first record, here with the records that arrived meanwhile.
    down = false;
    expect(await handler(event([...first, ...rest]))).toEqual({ batchItemFailures: [] });
    expect(await aws.records.get(journal.pk, journal.sk)).toBeUndefined();
    expect(await summary(aws, awsOrg)).toEqual(await summary(local, localOrg));
  });

  it("stops writing at its deadline and leaves the rest to the retry, which counts every log once", async () => {
    const { localOrg, awsOrg, records } = await countedLocallyAndWritten(20);
    const handler = createAnalyticsStreamHandler(async () => aws);
    // Less time left than the handler's margin: the deadline has already passed when the totals are written.
    const nearlyOut = { getRemainingTimeInMillis: () => 1_000 };
    expect(await handler(event(records), nearlyOut)).toEqual({
      batchItemFailures: [{ itemIdentifier: records[0]!.dynamodb!.SequenceNumber }],
    });
    expect(await summary(aws, awsOrg)).not.toEqual(await summary(local, localOrg));
    expect(await handler(event(records))).toEqual({ batchItemFailures: [] });
    expect(await summary(aws, awsOrg)).toEqual(await summary(local, localOrg));
  });

  it("undoes a batch whose daily counts failed half-way, so its retry counts it once", async () => {
    const { localOrg, awsOrg, records } = await countedLocallyAndWritten(30);

    // One cell's daily count (round 1) fails; the other round-1 adds succeed and must be undone.
    let down = true;
    const flaky = flakyCounters(
      aws.counters,
      (key) => down && key.includes("|anthropic|") && /\|d[^|]+\|.*\|n$/.test(key),
    );
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: flaky.counters }), {
      retryDelaysMs: [1],
    });
    expect((await handler(event(records))).batchItemFailures).toEqual([
      { itemIdentifier: records[0]!.dynamodb!.SequenceNumber },
    ]);
    const undone = await summary(aws, awsOrg);
    expect(requestsOf(undone)).toBe(0);
    expect(undone.users).toBe(0);

    down = false;
    expect(await handler(event(records))).toEqual({ batchItemFailures: [] });
    expect(await summary(aws, awsOrg)).toEqual(await summary(local, localOrg));
  });

  it("keeps undo writes that fail in the journal for the retry", async () => {
    const { localOrg, awsOrg, records } = await countedLocallyAndWritten(12);

    // The first attempt fails in round 1, and the undo (negative adds) of the user and metadata counts fails too.
    let down = true;
    const flaky = flakyCounters(
      aws.counters,
      (key, amount) =>
        down && ((key.includes("|openai|") && /\|d[^|]+\|.*\|n$/.test(key)) || (amount < 0 && key.startsWith("ag|"))),
    );
    const handler = createAnalyticsStreamHandler(async () => ({ ...aws, counters: flaky.counters }), {
      retryDelaysMs: [],
    });
    expect((await handler(event(records))).batchItemFailures).toHaveLength(1);
    const journal = journalKey(records[0]!.eventID!);
    const saved = await aws.records.get(journal.pk, journal.sk);
    expect(saved).toBeDefined();
    expect(saved!.through).toBeUndefined();
    expect((saved!.adds as unknown[]).length).toBeGreaterThan(0);

    down = false;
    expect(await handler(event(records))).toEqual({ batchItemFailures: [] });
    expect(await aws.records.get(journal.pk, journal.sk)).toBeUndefined();
    expect(await summary(aws, awsOrg)).toEqual(await summary(local, localOrg));
  });

  it("counts feedback where it is given, while logs wait for the stream", async () => {
    const organisationId = `org_${randomUUID()}`;
    const recorder = new AnalyticsRecorder(aws.counters, aws.records);
    recorder.countLogsFromStream();
    const [log] = sampleLogs(organisationId, 1);
    await recorder.recordFeedback({
      organisationId,
      workspaceId: "ws_a",
      createdAt: Date.now(),
      count: 1,
      weightedValue: 4,
      weight: 0.5,
    });
    await recorder.record(log!);
    const result = await summary(aws, organisationId);
    const totals = result.hourly.reduce(
      (sum, bucket) => ({
        requests: sum.requests + bucket.totals.requests,
        feedback: sum.feedback + bucket.totals.feedbackCount,
        weight: sum.weight + bucket.totals.feedbackWeight,
      }),
      { requests: 0, feedback: 0, weight: 0 },
    );
    expect(totals).toEqual({ requests: 0, feedback: 1, weight: 0.5 });
  });
});

describe("the local recorder (the same counting, 100 ms at a time)", () => {
  it("undoes and counts again a batch whose daily counts failed once: no log lost, none counted twice", async () => {
    const referenceOrg = `org_${randomUUID()}`;
    const flakyOrg = `org_${randomUUID()}`;
    const logs = sampleLogs(referenceOrg, 30);
    await countLocally(logs);
    let failures = 0;
    const flaky = flakyCounters(local.counters, (key) => {
      // One daily count of one cell fails, once, after other round-1 adds of the batch were applied.
      if (failures > 0 || !key.includes("|openai|") || !/\|d[^|]+\|.*\|n$/.test(key)) return false;
      failures++;
      return true;
    });
    const recorder = new AnalyticsRecorder(flaky.counters, local.records, { flushIntervalMs: 1000 });
    for (const log of forOrganisation(logs, flakyOrg)) await recorder.record(log);
    await recorder.flush();
    expect(failures).toBe(1);
    expect(await summary(local, flakyOrg)).toEqual(await summary(local, referenceOrg));
  });
});

describe("the worker's Lambda entry point and the AWS services", () => {
  const savedEnv = { ...process.env };
  let tableName: string;

  beforeAll(async () => {
    tableName = `stream-${randomUUID()}`;
    await createTable(emulators.dynamodb, tableName);
    Object.assign(process.env, lambdaEnv(emulators, tableName));
  });

  afterAll(() => {
    process.env = savedEnv;
  });

  it("on AWS, the request path writes the log and no analytics; the stream worker counts it", async () => {
    const { servicesFromEnv } = await import("../../core/platform/aws/services-from-env.ts");
    const services = servicesFromEnv();
    expect(services.analytics.countsLogsFromStream).toBe(true);
    const organisationId = `org_${randomUUID()}`;
    const [log] = sampleLogs(organisationId, 1);
    const chat = { ...log!, route: "/v1/chat/completions", source: "gateway" as const };

    const calls: string[] = [];
    for (const port of ["records", "counters"] as const) {
      const target = services.stores[port] as unknown as Record<string, (...args: unknown[]) => unknown>;
      for (const method of ["get", "getMany", "query", "put", "add", "update", "delete"]) {
        const original = target[method];
        if (typeof original !== "function") continue;
        target[method] = (...args: unknown[]) => {
          calls.push(`${port}.${method}`);
          return original.apply(target, args);
        };
      }
    }
    // The log sink writes the log and its search index items itself (one BatchWriteItem, not records.put).
    const sink = services.stores.logSink;
    const write = sink.write.bind(sink);
    sink.write = (entry) => {
      calls.push("logSink.write");
      return write(entry);
    };
    expect(await services.logger.write(chat)).toBe(true);
    expect(calls).toEqual(["logSink.write"]);

    const { handler } = await import("../../functions/workers/analytics-stream.ts");
    const insert = streamRecord("INSERT", await rawItem(`LOG#${chat.id}`, "LOG", tableName));
    expect(await handler(event([insert]), { getRemainingTimeInMillis: () => 60_000 })).toEqual({
      batchItemFailures: [],
    });
    const reader = new AnalyticsReader(services.stores.counters, services.stores.records);
    const now = Date.now();
    const { buckets } = await reader.series({ organisationId, from: now - 4 * HOUR, to: now + 60_000 }, ["requests"]);
    expect(buckets.reduce((total, bucket) => total + bucket.totals.requests, 0)).toBe(1);
    await services.stores.close();
  });
});

import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import { deadLetterQueueName, MAX_RECEIVES, QUEUE_NAMES } from "../../core/store/ports.ts";
import { SEMANTIC_CACHE_DIMENSIONS, s3VectorIndexName } from "../../core/platform/aws/s3-vector-names.ts";
import { vectorBucketName } from "../../infra/naming.ts";
import { installRecordingSst, type RecordedComponent, type Recording } from "./recording-sst.ts";

const ROOT = resolve(import.meta.dirname, "../..");

/** Families deployed as functions; the others (RouteFamily.platform "container") run in the realtime service. */
const LAMBDA_FAMILIES = ROUTE_FAMILIES.filter((family) => (family.platform ?? "lambda") === "lambda");
const CONTAINER_FAMILIES = ROUTE_FAMILIES.filter((family) => family.platform === "container");

/** A concrete request path for a route: parameters and wildcards filled in. */
const concretePath = (path: string) =>
  path
    .split("/")
    .map((segment) => (segment.startsWith(":") ? "sample-id" : segment.includes("*") ? "a/b" : segment))
    .join("/");

/** `functions/chat.handler` -> functions/chat.ts exists. */
const handlerFileExists = (handler: string) => existsSync(resolve(ROOT, `${handler.replace(/\.handler$/, "")}.ts`));

let recording: Recording;
let config: any;
let outputs: any;

beforeAll(async () => {
  recording = installRecordingSst();
  config = (await import("../../sst.config.ts")).default;
  outputs = await config.run();
});

describe("sst.config.ts", () => {
  it("is an AWS app that retains production data", () => {
    expect(config.app({ stage: "prod" })).toMatchObject({ name: "ai-gateway", home: "aws", removal: "retain" });
    expect(config.app({ stage: "production" }).removal).toBe("retain");
    expect(config.app({ stage: "dev" }).removal).toBe("remove");
  });

  it("returns the router URL", () => {
    expect(outputs.url).toBe(recording.named("Router", "Gateway").instance.url);
    expect(recording.of("Router")).toHaveLength(1);
  });
});

describe("storage", () => {
  it("has the single table with gsi1 and ttl", () => {
    const [table, ...others] = recording.of("Dynamo");
    expect(others).toHaveLength(0);
    expect(table.args).toEqual({
      fields: { pk: "string", sk: "string", gsi1pk: "string", gsi1sk: "string" },
      primaryIndex: { hashKey: "pk", rangeKey: "sk" },
      globalIndexes: { gsi1: { hashKey: "gsi1pk", rangeKey: "gsi1sk" } },
      ttl: "ttl",
      // The analytics stream worker reads whole new items (request logs) from it.
      stream: "new-image",
    });
  });

  it("has one bucket", () => {
    expect(recording.of("Bucket")).toHaveLength(1);
  });

  it("gives every logical queue a dead-letter queue after MAX_RECEIVES", () => {
    const queues = recording.of("Queue");
    expect(queues).toHaveLength(QUEUE_NAMES.length * 2);
    for (const name of QUEUE_NAMES) {
      const queue = queueFor(name);
      expect(queue.args.dlq.retry).toBe(MAX_RECEIVES);
      expect(dlqOf(queue).args.dlq, "a DLQ has no DLQ of its own").toBeUndefined();
    }
  });

  it("creates the secrets", () => {
    expect(
      recording
        .of("Secret")
        .map((secret) => secret.name)
        .sort(),
    ).toEqual(["BootstrapAdminKey", "MasterKey"]);
  });
});

describe("semantic cache vectors (S3 Vectors)", () => {
  it("has one vector bucket, emptied on removal only for stages that are removed", () => {
    const [bucket, ...others] = recording.of("VectorBucket");
    expect(others).toHaveLength(0);
    expect(bucket.args).toEqual({ vectorBucketName: "ai-gateway-test-semantic-cache", forceDestroy: true });
  });

  it("has one float32 cosine index per supported dimension, named as the adapter addresses it", () => {
    const bucket = recording.of("VectorBucket")[0].instance;
    const indexes = recording.of("VectorIndex");
    expect(indexes.map((index) => index.args.dimension).sort((a, b) => a - b)).toEqual([...SEMANTIC_CACHE_DIMENSIONS]);
    for (const index of indexes) {
      expect(index.args).toEqual({
        vectorBucketName: bucket.vectorBucketName,
        indexName: s3VectorIndexName(index.args.dimension),
        dataType: "float32",
        dimension: index.args.dimension,
        distanceMetric: "cosine",
      });
    }
  });

  it("makes valid bucket names from any app and stage", () => {
    expect(vectorBucketName("ai-gateway", "Feature_Branch.42")).toBe("ai-gateway-feature-branch-42-semantic-cache");
    const long = vectorBucketName("ai-gateway", "x".repeat(80));
    expect(long.length).toBeLessThanOrEqual(63);
    expect(long).toMatch(/^[a-z0-9][a-z0-9-]*[a-z0-9]$/);
  });
});

describe("api", () => {
  it("has exactly one streaming function with a URL per route family that runs on Lambda", () => {
    const functions = recording.of("Function");
    expect(functions).toHaveLength(LAMBDA_FAMILIES.length);
    for (const family of LAMBDA_FAMILIES) {
      const matching = functions.filter((fn) => fn.args.handler === `functions/${family.name}.handler`);
      expect(matching, family.name).toHaveLength(1);
      const [fn] = matching;
      expect(handlerFileExists(fn.args.handler), fn.args.handler).toBe(true);
      expect(fn.args).toMatchObject({
        runtime: "nodejs24.x",
        streaming: true,
        url: true,
        timeout: `${family.timeoutSeconds} seconds`,
      });
    }
  });

  it("routes every path of the route table to its family's function", () => {
    for (const family of LAMBDA_FAMILIES) {
      for (const route of family.routes) {
        const url = recording.routeRequest(concretePath(route.path));
        const fn = url ? recording.functionByUrl(url) : undefined;
        expect(fn?.args.handler, `${route.method} ${route.path}`).toBe(`functions/${family.name}.handler`);
      }
    }
  });

  it("gives streamed answers CloudFront's longest read timeout", () => {
    const siteUrls = recording.of("StaticSite").map((site) => site.instance.url);
    for (const route of recording.routes.filter((candidate) => !siteUrls.includes(candidate.url))) {
      expect(route.args.readTimeout).toBe("60 seconds");
    }
  });
});

describe("web console", () => {
  const STATIC_FAMILIES = ROUTE_FAMILIES.filter((family) => family.platform === "static");

  it("is a static site built by scripts/build.ts into dist/console, behind the gateway's Router at /", () => {
    const [site, ...others] = recording.of("StaticSite");
    expect(others).toHaveLength(0);
    expect(site.name).toBe("Console");
    expect(site.args.build).toEqual({ command: "node scripts/build.ts console", output: "dist/console" });
    expect(site.args.router).toEqual({ instance: recording.named("Router", "Gateway").instance, path: "/" });
    const cacheOf = (files: string) =>
      site.args.assets.fileOptions.find((option: any) => option.files === files)?.cacheControl;
    expect(cacheOf("**/*.html")).toBe("no-cache");
    expect(cacheOf("assets/**")).toContain("immutable");
  });

  it("gets the static families' paths, which have no function; the API's paths still reach theirs", () => {
    const site = recording.named("StaticSite", "Console").instance;
    expect(STATIC_FAMILIES.map((family) => family.name)).toEqual(["console"]);
    const handlers = recording.of("Function").map((fn) => fn.args.handler);
    for (const family of STATIC_FAMILIES) {
      expect(handlers).not.toContain(`functions/${family.name}.handler`);
      for (const route of family.routes)
        expect(recording.routeRequest(concretePath(route.path)), route.path).toBe(site.url);
    }
    expect(recording.functionByUrl(recording.routeRequest("/v1/logs")!)?.args.handler).toBe("functions/logs.handler");
    expect(recording.functionByUrl(recording.routeRequest("/health")!)?.args.handler).toBe("functions/health.handler");
    expect(recording.functionByUrl(recording.routeRequest("/v1/unknown")!)?.args.handler).toBe(
      "functions/passthrough.handler",
    );
  });
});

describe("realtime service", () => {
  it("runs the container families, and only them, and gives them no function", () => {
    expect(CONTAINER_FAMILIES.map((family) => family.name)).toEqual(["realtime"]);
    const handlers = recording.of("Function").map((fn) => fn.args.handler);
    for (const family of CONTAINER_FAMILIES) expect(handlers).not.toContain(`functions/${family.name}.handler`);
  });

  it("is one Fargate service in a cluster in a VPC, from the Dockerfile, behind a load balancer checking /health", () => {
    const [service, ...others] = recording.of("Service");
    expect(others).toHaveLength(0);
    expect(recording.of("Cluster")).toHaveLength(1);
    expect(recording.of("Vpc")).toHaveLength(1);
    expect(service.args.cluster).toBe(recording.of("Cluster")[0].instance);
    expect(recording.of("Cluster")[0].args.vpc).toBe(recording.of("Vpc")[0].instance);
    expect(service.args.image).toEqual({ context: ".", dockerfile: "services/realtime/Dockerfile" });
    expect(existsSync(resolve(ROOT, service.args.image.dockerfile))).toBe(true);
    const dockerfile = readFileSync(resolve(ROOT, service.args.image.dockerfile), "utf8");
    expect(dockerfile).toContain("FROM node:24-slim AS build");
    expect(dockerfile).toContain("node scripts/build.ts realtime");
    expect(dockerfile).toMatch(/EXPOSE 8080/);
    expect(service.args.environment.PORT).toBe("8080");
    expect(service.args.loadBalancer.ports).toEqual([{ listen: "80/http", forward: "8080/http" }]);
    expect(service.args.loadBalancer.health["8080/http"].path).toBe("/health");
    expect(service.args.scaling.min).toBeGreaterThanOrEqual(1);
  });

  it("has the functions' links, permissions and environment, so it uses the same stores", () => {
    const service = recording.of("Service")[0];
    const chat = recording.named("Function", "ChatFunction");
    expect(service.args.link).toEqual(chat.args.link);
    expect(service.args.permissions).toEqual(chat.args.permissions);
    expect(service.args.environment).toMatchObject(chat.args.environment);
  });

  it("gets the container families' paths from the Router; every other path still reaches its function", () => {
    const service = recording.of("Service")[0].instance;
    for (const family of CONTAINER_FAMILIES) {
      for (const route of family.routes)
        expect(recording.routeRequest(concretePath(route.path)), route.path).toBe(service.url);
    }
    expect(recording.functionByUrl(recording.routeRequest("/v1/realtime-other")!)?.args.handler).toBe(
      "functions/passthrough.handler",
    );
  });

  it("sends a Responses WebSocket upgrade to the service, and plain Responses requests to their function", () => {
    const service = recording.of("Service")[0].instance;
    const injection = recording.named("Router", "Gateway").args.edge.viewerRequest.injection as string;
    // The Router's viewer-request function runs the injection on CloudFront's event before it routes.
    const routed = (uri: string, headers: Record<string, { value: string }>) => {
      const event = { request: { uri, headers } };
      new Function("event", injection)(event);
      return recording.routeRequest(event.request.uri);
    };
    expect(routed("/v1/responses", { upgrade: { value: "websocket" } })).toBe(service.url);
    expect(recording.functionByUrl(routed("/v1/responses", {})!)?.args.handler).toBe("functions/responses.handler");
    expect(
      recording.functionByUrl(routed("/v1/responses/resp_1", { upgrade: { value: "websocket" } })!)?.args.handler,
    ).toBe("functions/responses.handler");
  });
});

describe("every function (route families and workers)", () => {
  const allFunctionArgs = () => [
    ...recording.of("Function").map((fn) => fn.args),
    ...recording.subscriptions.map((subscription) => subscription.subscriber),
    ...recording.of("Cron").map((cron) => cron.args.function),
  ];

  it("is linked to the table, the bucket, every queue and the secrets", () => {
    const required = [
      ...recording.of("Dynamo"),
      ...recording.of("Bucket"),
      ...recording.of("Queue"),
      ...recording.of("Secret"),
    ].map((component) => component.instance);
    for (const args of allFunctionArgs()) {
      for (const instance of required) expect(args.link, args.handler).toContain(instance);
    }
  });

  it("may put, query, get and delete vectors in the semantic cache's indexes, and read prefixed secrets", () => {
    const indexArns = recording.of("VectorIndex").map((index) => index.instance.indexArn);
    for (const args of allFunctionArgs()) {
      expect(args.permissions, args.handler).toEqual([
        {
          actions: [
            "s3vectors:PutVectors",
            "s3vectors:QueryVectors",
            "s3vectors:GetVectors",
            "s3vectors:DeleteVectors",
          ],
          resources: indexArns,
        },
        // Secret references (core/store/secret-refs.ts): read-only, and only names under the prefix.
        {
          actions: ["secretsmanager:GetSecretValue"],
          resources: ["arn:aws:secretsmanager:*:*:secret:gateway/*"],
        },
        { actions: ["ssm:GetParameter"], resources: ["arn:aws:ssm:*:*:parameter/gateway/*"] },
      ]);
    }
  });

  it("gets the environment the AWS platform adapter reads", () => {
    const table = recording.of("Dynamo")[0].instance;
    const bucket = recording.of("Bucket")[0].instance;
    for (const args of allFunctionArgs()) {
      const env = args.environment;
      expect(env).toMatchObject({
        GATEWAY_PLATFORM: "aws",
        GATEWAY_TABLE: table.name,
        GATEWAY_BUCKET: bucket.name,
        GATEWAY_MASTER_KEY: recording.named("Secret", "MasterKey").instance.value,
        GATEWAY_BOOTSTRAP_ADMIN_KEY: recording.named("Secret", "BootstrapAdminKey").instance.value,
        GATEWAY_VECTOR_BUCKET: recording.of("VectorBucket")[0].instance.vectorBucketName,
        GATEWAY_VECTOR_DIMENSIONS: SEMANTIC_CACHE_DIMENSIONS.join(","),
        GATEWAY_SECRET_REF_PREFIX: "gateway/",
      });
      const queueUrls = JSON.parse(env.GATEWAY_QUEUE_URLS);
      for (const name of QUEUE_NAMES) {
        const queue = queueFor(name);
        expect(queueUrls[name]).toBe(queue.instance.url);
        expect(queueUrls[deadLetterQueueName(name)]).toBe(dlqOf(queue).instance.url);
      }
    }
  });
});

describe("workers", () => {
  it("subscribes one worker per queue with partial batch responses", () => {
    expect(recording.subscriptions).toHaveLength(QUEUE_NAMES.length);
    for (const name of QUEUE_NAMES) {
      const queue = queueFor(name);
      const subscription = recording.subscriptions.find((candidate) => candidate.queue === queue.name);
      expect(subscription, name).toBeDefined();
      expect(subscription!.subscriber.handler).toBe(`functions/workers/${name}.handler`);
      expect(handlerFileExists(subscription!.subscriber.handler)).toBe(true);
      expect(subscription!.subscriber.runtime).toBe("nodejs24.x");
      expect(subscription!.args.batch.partialResponses).toBe(true);
    }
  });

  it("bounds each queue's worker concurrency, so a big batch cannot flood providers", () => {
    for (const name of QUEUE_NAMES) {
      const subscription = recording.subscriptions.find((candidate) => candidate.queue === queueFor(name).name)!;
      const concurrency = subscription.args.transform.eventSourceMapping.scalingConfig.maximumConcurrency;
      // Lambda's SQS event sources accept 2..1000.
      expect(concurrency, name).toBeGreaterThanOrEqual(2);
      expect(concurrency, name).toBeLessThanOrEqual(1000);
    }
  });

  it("runs the scheduled tasks every minute in a function of their own", () => {
    const crons = recording.of("Cron");
    expect(crons).toHaveLength(1);
    const { args } = crons[0]!;
    expect(args.schedule).toBe("rate(1 minute)");
    expect(args.function.handler).toBe("functions/workers/scheduled.handler");
    expect(handlerFileExists(args.function.handler)).toBe(true);
    expect(args.function.runtime).toBe("nodejs24.x");
    // It must finish well within the minute, so two ticks rarely overlap.
    expect(seconds(args.function.timeout)).toBeLessThanOrEqual(60);
  });

  it("never lets a message reappear while its worker may still be running", () => {
    for (const subscription of recording.subscriptions) {
      const queue = recording.named("Queue", subscription.queue);
      expect(seconds(queue.args.visibilityTimeout)).toBeGreaterThanOrEqual(seconds(subscription.subscriber.timeout));
    }
  });
});

describe("analytics stream worker", () => {
  const subscription = () => {
    const table = recording.of("Dynamo")[0];
    const found = recording.streamSubscriptions.filter((entry) => entry.table === table.name);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it("subscribes one worker to the table's stream", () => {
    const { name, subscriber } = subscription();
    expect(name).toBe("AnalyticsStream");
    expect(subscriber.handler).toBe("functions/workers/analytics-stream.handler");
    expect(handlerFileExists(subscriber.handler)).toBe(true);
    expect(subscriber).toMatchObject({ runtime: "nodejs24.x", architecture: "arm64", nodejs: { splitting: true } });
  });

  it("gets only the table: linked to it, and the table's name in its environment", () => {
    const { subscriber } = subscription();
    const table = recording.of("Dynamo")[0].instance;
    expect(subscriber.link).toEqual([table]);
    expect(subscriber.environment).toEqual({ GATEWAY_PLATFORM: "aws", GATEWAY_TABLE: table.name });
  });

  it("receives only INSERTs of request-log items", () => {
    const { args } = subscription();
    expect(args.filters).toEqual([
      { eventName: ["INSERT"], dynamodb: { Keys: { pk: { S: [{ prefix: "LOG#" }] }, sk: { S: ["LOG"] } } } },
    ]);
    // Lambda event filter patterns must be JSON (SST stringifies each one).
    for (const filter of args.filters) expect(JSON.parse(JSON.stringify(filter))).toEqual(filter);
  });

  it("reports partial batch failures, and batches logs so counters are written once per batch", () => {
    const { args, subscriber } = subscription();
    const mapping = args.transform.eventSourceMapping;
    expect(mapping).toMatchObject({
      functionResponseTypes: ["ReportBatchItemFailures"],
      bisectBatchOnFunctionError: false,
      startingPosition: "LATEST",
    });
    expect(mapping.batchSize).toBeGreaterThanOrEqual(100);
    expect(mapping.maximumBatchingWindowInSeconds).toBeGreaterThan(0);
    expect(mapping.maximumBatchingWindowInSeconds).toBeLessThanOrEqual(300);
    expect(mapping.maximumRetryAttempts).toBeGreaterThan(0);
    expect(seconds(subscriber.timeout)).toBeGreaterThanOrEqual(30);
  });
});

function dlqOf(queue: RecordedComponent): RecordedComponent {
  const dlq = recording.of("Queue").find((candidate) => candidate.instance.arn === queue.args.dlq?.queue);
  if (!dlq) throw new Error(`queue ${queue.name} has no dead-letter queue`);
  return dlq;
}

/** The recorded queue component of a logical queue: the one whose URL the functions get under its name. */
function queueFor(name: string): RecordedComponent {
  const env = recording.of("Function")[0].args.environment;
  const url = JSON.parse(env.GATEWAY_QUEUE_URLS)[name];
  const queue = recording.of("Queue").find((component) => component.instance.url === url);
  if (!queue) throw new Error(`no queue for ${name}`);
  return queue;
}

function seconds(duration: string): number {
  const [amount, unit] = duration.split(" ");
  return Number(amount) * (unit.startsWith("minute") ? 60 : unit.startsWith("hour") ? 3600 : 1);
}

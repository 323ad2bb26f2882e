import type { LambdaNodejsOptions } from "../../infra/lambda-bundle.ts";
import { installRecordingSst, type Recording } from "../infra/recording-sst.ts";

/**
 * What `sst deploy` would create, read from the SST definition itself: sst.config.ts evaluated against the
 * recording stand-in of sst.aws.* (test/infra/recording-sst.ts), then turned into plain data the local AWS shape
 * runs: functions (entry, bundling options, memory, timeout, environment), the Router's routes, queues and their
 * subscriptions, schedules, the realtime service and the console's static site. Deploy-time values (table name,
 * queue URLs, secrets) are still the recording's placeholders here; test/aws-shape/resources.ts resolves them.
 */

export interface FunctionDefinition {
  /** Unique name: the component's (ChatFunction), or `<Queue>Subscriber` / `<Cron>Handler` as SST names them. */
  name: string;
  /** The source file SST bundles: functions/chat.ts. */
  entry: string;
  nodejs: LambdaNodejsOptions;
  memoryMb: number;
  timeoutSeconds: number;
  /** As infra gives it, with placeholders for deploy-time values. */
  environment: Record<string, string>;
  /** Response streaming through a function URL (route families); queue and schedule workers are plain. */
  streaming: boolean;
  /** The placeholder URL of its function URL, which the Router's routes name. */
  url?: string;
}

export interface RouteDefinition {
  /** The Router's path prefix. */
  pattern: string;
  /** The placeholder URL routed to: a function URL, the service's load balancer or the static site's bucket. */
  url: string;
  readTimeoutSeconds: number;
}

export interface QueueDefinition {
  component: string;
  /** Placeholders: the URL and ARN functions get. */
  url: string;
  arn: string;
  visibilityTimeoutSeconds: number;
  /** The dead-letter queue (its placeholder ARN) and how many receives a message gets before moving there. */
  deadLetters?: { arn: string; maxReceives: number };
}

export interface SubscriptionDefinition {
  queue: string;
  worker: FunctionDefinition;
  batchSize: number;
  partialResponses: boolean;
  /** The event source's maximum concurrency (scalingConfig); Lambda's minimum is 2. */
  maximumConcurrency: number;
}

export interface ScheduleDefinition {
  name: string;
  everySeconds: number;
  worker: FunctionDefinition;
}

export interface ServiceDefinition {
  name: string;
  url: string;
  dockerfile: string;
  environment: Record<string, string>;
  healthPath: string;
}

export interface StaticSiteDefinition {
  url: string;
  /** Folder the build writes (relative to the repository), and the command that writes it. */
  output: string;
  buildCommand: string;
  fileOptions: Array<{ files: string | string[]; cacheControl?: string; contentType?: string }>;
}

export interface ShapeDefinition {
  functions: FunctionDefinition[];
  routes: RouteDefinition[];
  queues: QueueDefinition[];
  subscriptions: SubscriptionDefinition[];
  schedules: ScheduleDefinition[];
  /** DynamoDB stream subscribers: not run by the shape (dynalite has no streams), listed for what it leaves out. */
  streamSubscribers: FunctionDefinition[];
  service?: ServiceDefinition;
  site?: StaticSiteDefinition;
  /** Placeholders of deploy-time values: the table's and bucket's names, each secret's value. */
  placeholders: { table: string; bucket: string; secrets: Record<string, string> };
  vectorIndexes: Array<{ bucket: string; name: string; dimension: number; distanceMetric: string }>;
}

let evaluated: Promise<ShapeDefinition> | undefined;

/**
 * The definition, evaluated once per process: sst.config.ts imports infra/*, and modules are evaluated only
 * once, so a second recording would see no component.
 */
export function deployedShape(): Promise<ShapeDefinition> {
  evaluated ??= (async () => {
    const recording = installRecordingSst();
    const config = (await import("../../sst.config.ts")).default;
    await config.run();
    return shapeOf(recording);
  })();
  return evaluated;
}

function shapeOf(recording: Recording): ShapeDefinition {
  const functions = recording.of("Function").map((fn) => functionOf(fn.name, fn.args, fn.instance.url));
  const queues = recording.of("Queue").map(
    (queue): QueueDefinition => ({
      component: queue.name,
      url: queue.instance.url,
      arn: queue.instance.arn,
      // SQS's default when none is given.
      visibilityTimeoutSeconds: queue.args.visibilityTimeout ? seconds(queue.args.visibilityTimeout) : 30,
      deadLetters: queue.args.dlq
        ? { arn: String(queue.args.dlq.queue ?? queue.args.dlq), maxReceives: Number(queue.args.dlq.retry ?? 3) }
        : undefined,
    }),
  );
  const subscriptions = recording.subscriptions.map(
    (subscription): SubscriptionDefinition => ({
      queue: subscription.queue,
      worker: functionOf(`${subscription.queue}Subscriber`, subscription.subscriber),
      batchSize: subscription.args.batch?.size ?? 10,
      partialResponses: subscription.args.batch?.partialResponses ?? false,
      maximumConcurrency: Math.max(
        2,
        subscription.args.transform?.eventSourceMapping?.scalingConfig?.maximumConcurrency ?? 1000,
      ),
    }),
  );
  const schedules = recording.of("Cron").map(
    (cron): ScheduleDefinition => ({
      name: cron.name,
      everySeconds: rateSeconds(cron.args.schedule),
      worker: functionOf(`${cron.name}Handler`, cron.args.function),
    }),
  );
  return {
    functions,
    routes: recording.routes.map((route) => ({
      pattern: route.pattern,
      url: route.url,
      // CloudFront's default origin read timeout.
      readTimeoutSeconds: route.args.readTimeout ? seconds(route.args.readTimeout) : 30,
    })),
    queues,
    subscriptions,
    schedules,
    streamSubscribers: recording.streamSubscriptions.map((entry) => functionOf(entry.name, entry.subscriber)),
    service: serviceOf(recording),
    site: siteOf(recording),
    placeholders: {
      table: recording.of("Dynamo")[0]!.instance.name,
      bucket: recording.of("Bucket")[0]!.instance.name,
      secrets: Object.fromEntries(recording.of("Secret").map((secret) => [secret.name, secret.instance.value])),
    },
    vectorIndexes: recording.of("VectorIndex").map((index) => ({
      bucket: index.args.vectorBucketName,
      name: index.args.indexName,
      dimension: index.args.dimension,
      distanceMetric: index.args.distanceMetric,
    })),
  };
}

function functionOf(name: string, args: any, url?: string): FunctionDefinition {
  return {
    name,
    entry: `${String(args.handler).replace(/\.handler$/, "")}.ts`,
    nodejs: args.nodejs ?? {},
    memoryMb: args.memory ? Number.parseInt(args.memory, 10) : 1024,
    // SST's default function timeout.
    timeoutSeconds: args.timeout ? seconds(args.timeout) : 20,
    environment: { ...(args.environment ?? {}) },
    streaming: args.streaming === true,
    url: args.url ? url : undefined,
  };
}

function serviceOf(recording: Recording): ServiceDefinition | undefined {
  const [service] = recording.of("Service");
  if (!service) return undefined;
  const health = Object.values(service.args.loadBalancer?.health ?? {})[0] as { path?: string } | undefined;
  return {
    name: service.name,
    url: service.instance.url,
    dockerfile: service.args.image.dockerfile,
    environment: { ...service.args.environment },
    healthPath: health?.path ?? "/",
  };
}

function siteOf(recording: Recording): StaticSiteDefinition | undefined {
  const [site] = recording.of("StaticSite");
  if (!site) return undefined;
  return {
    url: site.instance.url,
    output: site.args.build.output,
    buildCommand: site.args.build.command,
    fileOptions: site.args.assets?.fileOptions ?? [],
  };
}

const UNIT_SECONDS: Record<string, number> = { second: 1, minute: 60, hour: 3600, day: 86_400 };

/** SST durations: `60 seconds`, `90 minutes`, `1 hour`. */
export function seconds(duration: string): number {
  const match = /^(\d+(?:\.\d+)?) (second|minute|hour|day)s?$/.exec(duration);
  if (!match) throw new Error(`not an SST duration: '${duration}'`);
  return Number(match[1]) * UNIT_SECONDS[match[2]!]!;
}

/** EventBridge rate expressions: `rate(1 minute)`, `rate(5 minutes)`; cron expressions are not run by the shape. */
export function rateSeconds(schedule: string): number {
  const match = /^rate\((\d+) (minute|hour|day)s?\)$/.exec(schedule);
  if (!match) throw new Error(`the AWS shape runs rate(...) schedules only, not '${schedule}'`);
  return Number(match[1]) * UNIT_SECONDS[match[2]!]!;
}

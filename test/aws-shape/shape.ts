import { execFileSync } from "node:child_process";
import { resolve as resolvePath } from "node:path";
import { SQSClient } from "@aws-sdk/client-sqs";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { startS3VectorsMock } from "../mocks/s3-vectors.ts";
import { type EmulatorEndpoints, startEmulators, TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { selfSignedCertificate } from "./certificate.ts";
import { deployedShape, type FunctionDefinition, type ShapeDefinition } from "./definition.ts";
import { sstBundles } from "./function-bundles.ts";
import { startFunctionUrl } from "./function-url.ts";
import { InstancePool, type PoolOptions } from "./instance-pool.ts";
import { startRealtimeContainer } from "./realtime-container.ts";
import { createShapeResources } from "./resources.ts";
import { type RouterRoute, type RouteTarget, startRouter } from "./router.ts";
import { startSchedule } from "./schedules.ts";
import { type Delivery, startSqsEventSource } from "./sqs-event-source.ts";
import { siteBuilt, staticSite } from "./static-site.ts";

/**
 * The AWS shape, run as one system on this machine: every function of the SST definition bundled exactly as SST
 * bundles it, each behind a function-URL emulation (function-url.ts) with instances of its own (instance-pool.ts,
 * at least two, requests going round them, recycled now and then), the Router (router.ts: CloudFront's routing,
 * headers, limits, TLS and read timeout) in front of them, the realtime container service and the console's
 * static site; DynamoDB on dynalite, S3 and SQS on fauxqs, S3 Vectors on its mock; the queues' event source
 * mappings invoking their workers (sqs-event-source.ts) and the schedules the scheduled worker (schedules.ts).
 * docs/deploying-aws.md says how to start it by hand (`npm run aws-shape`) and what it does not emulate.
 */

export interface AwsShapeOptions {
  /** The test run's emulators; started (and stopped with the shape) when absent. */
  emulators?: EmulatorEndpoints;
  /** Instances requests go round per function (at least 2), most per function, and recycling (instance-pool.ts). */
  instances?: number;
  maxInstances?: number;
  recycleAfter?: number;
  /** Seconds an idle instance lives (default 300; Lambda keeps idle environments for minutes). */
  idleSeconds?: number;
  seed?: number;
  /** Shorter than infra's, for tests: every queue's visibility timeout, every schedule's period, every read timeout. */
  visibilityTimeoutSeconds?: number;
  scheduleEverySeconds?: number;
  readTimeoutSeconds?: number;
  /** Most pollers per queue (Lambda runs up to the mapping's maximum concurrency). */
  maxPollers?: number;
  /** Added to every function's and the service's environment (TRUSTED_CUSTOM_HOSTS for loopback mocks...). */
  environment?: Record<string, string>;
  /** Starts the realtime container service (default true). */
  realtime?: boolean;
  /** Echo every log line (functions, service, shape) to stdout. */
  echo?: boolean;
}

export interface ShapeFunction {
  definition: FunctionDefinition;
  pool: InstancePool;
}

export interface AwsShape {
  /** The Router's URL (https, self-signed: trust `certificate`). */
  url: string;
  certificate: Buffer;
  /** The bootstrap admin key (the BootstrapAdminKey secret). */
  adminKey: string;
  definition: ShapeDefinition;
  functions: Map<string, ShapeFunction>;
  /** Every SQS delivery so far, in order. */
  deliveries: Delivery[];
  /** The AWS stores on the shape's table, bucket and queues (seeding and checks from tests). */
  stores(): Stores;
  /** Runs a schedule now (the only one by default) and answers the worker's result. */
  tick(name?: string): Promise<unknown>;
  /** Everything the functions, the service and the shape logged. */
  output(): string;
  close(): Promise<void>;
}

const ROOT = resolvePath(import.meta.dirname, "../..");
/** Where every AWS service the shape does not emulate (KMS, Secrets Manager, SSM, STS) is sent: nowhere. */
const UNREACHABLE = "http://127.0.0.1:9";

export async function startAwsShape(options: AwsShapeOptions = {}): Promise<AwsShape> {
  const closers: Array<() => Promise<void> | void> = [];
  const lines: string[] = [];
  const log = (line: string) => {
    lines.push(line);
    if (options.echo) console.log(line);
  };
  const close = async () => {
    for (const closer of closers.splice(0).reverse()) await Promise.resolve(closer()).catch(() => {});
  };
  try {
    const definition = await deployedShape();
    const emulators = options.emulators ?? (await ownEmulators(closers));
    const vectors = await startS3VectorsMock();
    closers.push(() => vectors.close());
    const resources = await createShapeResources(definition, emulators, {
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
      s3vectors: vectors.url,
    });
    const workers = [...definition.subscriptions.map((s) => s.worker), ...definition.schedules.map((s) => s.worker)];
    const bundles = await sstBundles([...definition.functions, ...workers]);
    const environmentOf = (fn: { name: string; memoryMb: number; environment: Record<string, string> }) => ({
      ...lambdaRuntimeEnvironment(fn.name, fn.memoryMb),
      ...endpoints(emulators, vectors.url),
      ...resources.resolve(fn.environment),
      ...options.environment,
    });
    const poolOptions: PoolOptions = {
      instances: options.instances ?? 2,
      maxInstances: options.maxInstances ?? 8,
      recycleAfter: options.recycleAfter ?? 20,
      idleSeconds: options.idleSeconds ?? 300,
      seed: options.seed ?? 42,
    };
    const functions = new Map<string, ShapeFunction>();
    for (const fn of [...definition.functions, ...workers]) {
      const pool = new InstancePool(
        {
          functionName: fn.name,
          file: bundles.get(fn.entry)!,
          memoryMb: fn.memoryMb,
          timeoutSeconds: fn.timeoutSeconds,
          env: environmentOf(fn),
          log,
        },
        { ...poolOptions, seed: poolOptions.seed + functions.size },
      );
      functions.set(fn.name, { definition: fn, pool });
      closers.push(() => pool.close());
    }

    const targets = new Map<string, RouteTarget>();
    for (const { definition: fn, pool } of functions.values()) {
      if (!fn.url) continue;
      const functionUrl = await startFunctionUrl(new URL(fn.url).host, pool);
      closers.push(() => functionUrl.close());
      targets.set(fn.url, { kind: "origin", url: functionUrl.url, domain: functionUrl.domain });
    }
    if (definition.service && options.realtime !== false) {
      const service = await startRealtimeContainer({
        environment: {
          ...containerEnvironment(),
          ...endpoints(emulators, vectors.url),
          ...resources.resolve(definition.service.environment),
          ...options.environment,
        },
        healthPath: definition.service.healthPath,
        log,
      });
      closers.push(() => service.close());
      targets.set(definition.service.url, {
        kind: "origin",
        url: service.url,
        domain: new URL(definition.service.url).host,
      });
    }
    if (definition.site) {
      if (!siteBuilt(definition.site, ROOT)) buildSite(definition.site.buildCommand);
      targets.set(definition.site.url, { kind: "static", handle: staticSite(definition.site, ROOT) });
    }
    const routes: RouterRoute[] = definition.routes.flatMap((route) => {
      const target = targets.get(route.url);
      if (!target && route.url === definition.service?.url) return [];
      if (!target) throw new Error(`the AWS shape has nothing behind the route ${route.pattern} (${route.url})`);
      return [
        {
          pattern: route.pattern,
          target,
          readTimeoutMs: (options.readTimeoutSeconds ?? route.readTimeoutSeconds) * 1000,
        },
      ];
    });
    const certificate = selfSignedCertificate();
    const router = await startRouter(routes, certificate);
    closers.push(() => router.close());

    const deliveries: Delivery[] = [];
    const sqs = new SQSClient({ endpoint: emulators.fauxqs, region: TEST_REGION, credentials: TEST_CREDENTIALS });
    closers.push(() => sqs.destroy());
    for (const subscription of definition.subscriptions) {
      const queue = resources.queues.get(subscription.queue)!;
      const { pool } = functions.get(subscription.worker.name)!;
      const source = startSqsEventSource({
        sqs,
        queueName: subscription.queue,
        queueUrl: queue.url,
        queueArn: queue.arn,
        batchSize: subscription.batchSize,
        partialResponses: subscription.partialResponses,
        pollers: Math.min(subscription.maximumConcurrency, options.maxPollers ?? 4),
        invoke: (event, onInstance) =>
          pool.invoke((instance) => {
            onInstance(instance.id);
            return instance.invoke(event);
          }),
        record: (delivery) => deliveries.push(delivery),
        log,
      });
      closers.push(() => source.stop());
    }
    const schedules = new Map(
      definition.schedules.map((schedule) => {
        const { pool } = functions.get(schedule.worker.name)!;
        const running = startSchedule({
          name: schedule.name,
          everySeconds: options.scheduleEverySeconds ?? schedule.everySeconds,
          invoke: (event) => pool.invoke((instance) => instance.invoke(event)),
          log,
        });
        closers.push(() => running.stop());
        return [schedule.name, running];
      }),
    );

    let stores: Stores | undefined;
    closers.push(() => stores?.close());
    return {
      url: router.url,
      certificate: certificate.cert,
      adminKey: resources.adminKey,
      definition,
      functions,
      deliveries,
      stores: () => {
        stores ??= createAwsStores({
          tableName: resources.tableName,
          bucketName: resources.bucketName,
          queueUrls: JSON.parse(resources.resolve(definition.functions[0]!.environment).GATEWAY_QUEUE_URLS!),
          masterKey: Buffer.from(resources.masterKey, "base64"),
          endpoints: { dynamodb: emulators.dynamodb, s3: emulators.fauxqs, sqs: emulators.fauxqs },
          region: TEST_REGION,
          credentials: TEST_CREDENTIALS,
        });
        return stores;
      },
      tick: (name) => {
        const schedule = name ? schedules.get(name) : [...schedules.values()][0];
        if (!schedule) throw new Error(`no schedule ${name ?? ""}`);
        return schedule.tick();
      },
      output: () => lines.join("\n"),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function ownEmulators(closers: Array<() => Promise<void> | void>): Promise<EmulatorEndpoints> {
  const emulators = await startEmulators();
  closers.push(() => emulators.stop());
  return emulators.endpoints;
}

/** What the Lambda runtime sets in every function's environment (besides the function's own variables). */
function lambdaRuntimeEnvironment(name: string, memoryMb: number): Record<string, string> {
  return {
    AWS_REGION: TEST_REGION,
    AWS_DEFAULT_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_EXECUTION_ENV: "AWS_Lambda_nodejs24.x",
    LAMBDA_TASK_ROOT: "/var/task",
    TZ: ":UTC",
  };
}

/** What the container gets from its task role and ECS: a region and credentials. */
function containerEnvironment(): Record<string, string> {
  return {
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
  };
}

/** The emulators in place of DynamoDB, S3, SQS and S3 Vectors; every other AWS endpoint goes nowhere. */
function endpoints(emulators: EmulatorEndpoints, s3vectors: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: UNREACHABLE,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_S3: emulators.fauxqs,
    AWS_ENDPOINT_URL_SQS: emulators.fauxqs,
    AWS_ENDPOINT_URL_S3VECTORS: s3vectors,
  };
}

/** As `sst deploy` does before uploading: the site's build command (the console, with Vite). */
function buildSite(command: string): void {
  const [program, ...args] = command.split(" ");
  execFileSync(program === "node" ? process.execPath : program!, args, { cwd: ROOT, stdio: "inherit" });
}

import { SQSClient } from "@aws-sdk/client-sqs";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { startS3VectorsMock } from "../mocks/s3-vectors.ts";
import { type EmulatorEndpoints, startEmulators, TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { deployedShape, type FunctionDefinition, type ShapeDefinition } from "./definition.ts";
import { startEdge } from "./edge.ts";
import { containerEnvironment, emulatorEndpoints, lambdaRuntimeEnvironment } from "./environment.ts";
import { sstBundles } from "./function-bundles.ts";
import { InstancePool, type PoolOptions } from "./instance-pool.ts";
import { startQueueWork } from "./queue-work.ts";
import { createShapeResources } from "./resources.ts";
import type { Delivery } from "./sqs-event-source.ts";

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
  /** The queues as created, by component name (Batches, BatchesDlq...). */
  queues: Map<string, { url: string; arn: string; name: string }>;
  /** The AWS stores on the shape's table, bucket and queues (seeding and checks from tests). */
  stores(): Stores;
  /** Runs a schedule now (the only one by default) and answers the worker's result. */
  tick(name?: string): Promise<unknown>;
  /** Everything the functions, the service and the shape logged. */
  output(): string;
  close(): Promise<void>;
}

/** Every piece the shape started, stopped in reverse order; and what they logged. */
class Running {
  readonly lines: string[] = [];
  readonly #closers: Array<() => Promise<void> | void> = [];
  readonly #echo: boolean;

  constructor(echo: boolean) {
    this.#echo = echo;
  }

  log = (line: string): void => {
    this.lines.push(line);
    if (this.#echo) console.log(line);
  };

  onClose = (closer: () => Promise<void> | void): void => {
    this.#closers.push(closer);
  };

  close = async (): Promise<void> => {
    for (const closer of this.#closers.splice(0).reverse()) await Promise.resolve(closer()).catch(() => {});
  };
}

export async function startAwsShape(options: AwsShapeOptions = {}): Promise<AwsShape> {
  const running = new Running(options.echo === true);
  try {
    const definition = await deployedShape();
    const emulators = options.emulators ?? (await ownEmulators(running));
    const vectors = await startS3VectorsMock();
    running.onClose(() => vectors.close());
    const resources = await createShapeResources(definition, emulators, {
      visibilityTimeoutSeconds: options.visibilityTimeoutSeconds,
      s3vectors: vectors.url,
    });
    // The environment infra/ gives it (deploy-time values filled in), over what its platform sets, the emulators'
    // endpoints, and the caller's additions last.
    const environmentOf = (platform: Record<string, string>, infra: Record<string, string>) => ({
      ...platform,
      ...emulatorEndpoints(emulators, vectors.url),
      ...resources.resolve(infra),
      ...options.environment,
    });
    const functions = await startFunctions(
      definition,
      options,
      (fn) => environmentOf(lambdaRuntimeEnvironment(fn.name, fn.memoryMb), fn.environment),
      running,
    );
    const pools = new Map([...functions].map(([name, fn]) => [name, fn.pool]));
    const service = options.realtime === false ? undefined : definition.service;
    const edge = await startEdge(definition, {
      pools,
      serviceEnvironment: service && environmentOf(containerEnvironment(), service.environment),
      readTimeoutSeconds: options.readTimeoutSeconds,
      log: running.log,
      onClose: running.onClose,
    });
    const sqs = new SQSClient({ endpoint: emulators.fauxqs, region: TEST_REGION, credentials: TEST_CREDENTIALS });
    running.onClose(() => sqs.destroy());
    const { deliveries, schedules } = startQueueWork(definition, {
      sqs,
      pools,
      resources,
      maxPollers: options.maxPollers ?? 4,
      scheduleEverySeconds: options.scheduleEverySeconds,
      log: running.log,
      onClose: running.onClose,
    });
    let stores: Stores | undefined;
    running.onClose(() => stores?.close());
    return {
      url: edge.url,
      certificate: edge.certificate,
      adminKey: resources.adminKey,
      definition,
      functions,
      deliveries,
      queues: resources.queues,
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
      output: () => running.lines.join("\n"),
      close: running.close,
    };
  } catch (error) {
    await running.close();
    throw error;
  }
}

/** Every function (route families, queue and schedule workers) bundled as SST bundles it, with its instances. */
async function startFunctions(
  definition: ShapeDefinition,
  options: AwsShapeOptions,
  environmentOf: (fn: FunctionDefinition) => Record<string, string>,
  running: Running,
): Promise<Map<string, ShapeFunction>> {
  const workers = [...definition.subscriptions.map((s) => s.worker), ...definition.schedules.map((s) => s.worker)];
  const bundles = await sstBundles([...definition.functions, ...workers]);
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
        log: running.log,
      },
      // Each function recycles on its own draws.
      { ...poolOptions, seed: poolOptions.seed + functions.size },
    );
    functions.set(fn.name, { definition: fn, pool });
    running.onClose(() => pool.close());
  }
  return functions;
}

async function ownEmulators(running: Running): Promise<EmulatorEndpoints> {
  const emulators = await startEmulators();
  running.onClose(() => emulators.stop());
  return emulators.endpoints;
}

import { randomBytes } from "node:crypto";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import { CreateIndexCommand, CreateVectorBucketCommand, S3VectorsClient } from "@aws-sdk/client-s3vectors";
import {
  createBucket,
  createTable,
  type EmulatorEndpoints,
  TEST_CREDENTIALS,
  TEST_REGION,
} from "../setup/emulators.ts";
import type { ShapeDefinition } from "./definition.ts";

/**
 * The shape's stores on the emulators: a table (dynalite), a bucket and every queue (fauxqs) named uniquely per
 * shape so shapes in parallel never share messages, each queue with the visibility timeout and dead-letter
 * redrive infra gives it, and the semantic cache's vector indexes (the S3 Vectors mock). `resolve` then turns an
 * environment as infra wrote it (the recording's placeholders for names, URLs and secrets) into the one the
 * functions get here.
 */

export interface ShapeResources {
  tableName: string;
  bucketName: string;
  /** Queue component name -> URL, ARN and name as created. */
  queues: Map<string, { url: string; arn: string; name: string }>;
  masterKey: string;
  adminKey: string;
  /** An environment as infra wrote it, with every deploy-time placeholder replaced. */
  resolve(environment: Record<string, string>): Record<string, string>;
}

export interface ResourceOptions {
  /** Replaces every queue's visibility timeout (seconds): infra's are 30 and 90 minutes, too long for tests. */
  visibilityTimeoutSeconds?: number;
  /** Where the semantic cache's vector indexes live (the S3 Vectors mock), if anywhere. */
  s3vectors?: string;
}

export async function createShapeResources(
  definition: ShapeDefinition,
  emulators: EmulatorEndpoints,
  options: ResourceOptions = {},
): Promise<ShapeResources> {
  const suffix = randomBytes(4).toString("hex");
  const tableName = `shape-${suffix}`;
  const bucketName = `shape-${suffix}-blobs`;
  await Promise.all([createTable(emulators.dynamodb, tableName), createBucket(emulators.fauxqs, bucketName)]);
  const queues = await createQueues(definition, emulators.fauxqs, suffix, options.visibilityTimeoutSeconds);
  if (options.s3vectors) await createVectorIndexes(definition, options.s3vectors);

  const masterKey = randomBytes(32).toString("base64");
  const adminKey = `gk-shape-${randomBytes(24).toString("hex")}`;
  const values = new Map<string, string>([
    [definition.placeholders.table, tableName],
    [definition.placeholders.bucket, bucketName],
  ]);
  for (const queue of definition.queues) {
    const created = queues.get(queue.component)!;
    values.set(queue.url, created.url);
    values.set(queue.arn, created.arn);
  }
  for (const [name, placeholder] of Object.entries(definition.placeholders.secrets)) {
    values.set(
      placeholder,
      name === "MasterKey" ? masterKey : name === "BootstrapAdminKey" ? adminKey : randomSecret(),
    );
  }
  const resolveValue = (value: unknown): unknown => {
    if (typeof value === "string") return values.get(value) ?? value;
    if (Array.isArray(value)) return value.map(resolveValue);
    if (value && typeof value === "object")
      return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, resolveValue(item)]));
    return value;
  };
  return {
    tableName,
    bucketName,
    queues,
    masterKey,
    adminKey,
    resolve(environment) {
      const resolved: Record<string, string> = {};
      for (const [name, value] of Object.entries(environment)) {
        const json = parseJson(value);
        resolved[name] = json === undefined ? String(resolveValue(value)) : JSON.stringify(resolveValue(json));
        if (/<[A-Za-z]+\.[a-z]+>|<secret |\.amazonaws\.com\/123456789012\//.test(resolved[name]!))
          throw new Error(
            `the AWS shape cannot resolve ${name}=${resolved[name]}: infra names a resource it does not create`,
          );
      }
      return resolved;
    },
  };
}

async function createQueues(
  definition: ShapeDefinition,
  endpoint: string,
  suffix: string,
  visibilityOverride: number | undefined,
): Promise<Map<string, { url: string; arn: string; name: string }>> {
  const client = new SQSClient({ endpoint, region: TEST_REGION, credentials: TEST_CREDENTIALS });
  const created = new Map<string, { url: string; arn: string; name: string }>();
  try {
    // Dead-letter queues first: the others' redrive policies name them.
    const ordered = [...definition.queues].sort((a, b) => Number(!!a.deadLetters) - Number(!!b.deadLetters));
    for (const queue of ordered) {
      const name = `${queue.component}-${suffix}`;
      const attributes: Record<string, string> = {
        VisibilityTimeout: String(visibilityOverride ?? queue.visibilityTimeoutSeconds),
      };
      if (queue.deadLetters) {
        const target = definition.queues.find((candidate) => candidate.arn === queue.deadLetters!.arn)!;
        attributes.RedrivePolicy = JSON.stringify({
          deadLetterTargetArn: created.get(target.component)!.arn,
          maxReceiveCount: queue.deadLetters.maxReceives,
        });
      }
      const { QueueUrl } = await client.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
      const { Attributes } = await client.send(
        new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["QueueArn"] }),
      );
      // fauxqs names its queues http://sqs.<region>.localhost:<port>/..., a host nothing resolves here, and the SDK
      // sends to a queue URL's own host rather than to an AWS_ENDPOINT_URL_SQS: the emulator's address instead.
      const url = new URL(QueueUrl!);
      url.host = new URL(endpoint).host;
      created.set(queue.component, { url: url.href, arn: Attributes!.QueueArn!, name });
    }
    return created;
  } finally {
    client.destroy();
  }
}

async function createVectorIndexes(definition: ShapeDefinition, endpoint: string): Promise<void> {
  const client = new S3VectorsClient({ endpoint, region: TEST_REGION, credentials: TEST_CREDENTIALS });
  try {
    for (const bucket of new Set(definition.vectorIndexes.map((index) => index.bucket)))
      await client.send(new CreateVectorBucketCommand({ vectorBucketName: bucket }));
    for (const index of definition.vectorIndexes) {
      await client.send(
        new CreateIndexCommand({
          vectorBucketName: index.bucket,
          indexName: index.name,
          dataType: "float32",
          dimension: index.dimension,
          distanceMetric: index.distanceMetric as "cosine" | "euclidean",
        }),
      );
    }
  } finally {
    client.destroy();
  }
}

function parseJson(value: string): unknown {
  if (!/^[[{]/.test(value)) return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

function randomSecret(): string {
  return randomBytes(24).toString("base64url");
}

import { deadLetterQueueName } from "../core/store/ports.ts";
import { LAMBDA_NODEJS } from "./lambda-bundle.ts";
import { bootstrapAdminKey, masterKey } from "./secrets.ts";
import { bucket, queues, table } from "./storage.ts";
import { SEMANTIC_CACHE_DIMENSIONS } from "../core/platform/aws/s3-vector-names.ts";
import { VECTOR_PERMISSIONS, vectorBucket } from "./vectors.ts";

/**
 * What every gateway Lambda (route-family functions and queue workers) gets: links to all the stores and
 * secrets (a link grants the IAM permissions on them), permissions on the semantic cache's S3 Vectors indexes
 * (not an SST component, so not linkable), and the environment that
 * core/platform/aws/services-from-env.ts reads.
 */

const queueEntries = Object.entries(queues);

/** Logical queue name (DLQs included, as the SQS adapter addresses them) -> queue URL. */
const queueUrls = Object.fromEntries(
  queueEntries.flatMap(([name, { queue, deadLetters }]) => [
    [name, queue.url],
    [deadLetterQueueName(name), deadLetters.url],
  ]),
);

/**
 * Secret references in provider credentials (core/store/secret-refs.ts): the functions may read Secrets Manager
 * secrets and SSM parameters whose names start with this prefix, and nothing else there. Set
 * GATEWAY_SECRET_REF_PREFIX when deploying to change it; the runtime gets the same value and refuses other
 * names before asking AWS.
 */
export const SECRET_REF_PREFIX = process.env.GATEWAY_SECRET_REF_PREFIX ?? "gateway/";

export const SECRET_REF_PERMISSIONS = [
  {
    actions: ["secretsmanager:GetSecretValue"],
    resources: [`arn:aws:secretsmanager:*:*:secret:${SECRET_REF_PREFIX}*`],
  },
  { actions: ["ssm:GetParameter"], resources: [`arn:aws:ssm:*:*:parameter/${SECRET_REF_PREFIX}*`] },
];

export const gatewayLinks: SstLinkable[] = [
  table,
  bucket,
  ...queueEntries.flatMap(([, { queue, deadLetters }]) => [queue, deadLetters]),
  masterKey,
  bootstrapAdminKey,
];

export const gatewayEnvironment: Record<string, SstInput<string>> = {
  GATEWAY_PLATFORM: "aws",
  GATEWAY_TABLE: table.name,
  GATEWAY_BUCKET: bucket.name,
  GATEWAY_QUEUE_URLS: $jsonStringify(queueUrls),
  GATEWAY_MASTER_KEY: masterKey.value,
  GATEWAY_BOOTSTRAP_ADMIN_KEY: bootstrapAdminKey.value,
  GATEWAY_VECTOR_BUCKET: vectorBucket.vectorBucketName,
  GATEWAY_VECTOR_DIMENSIONS: SEMANTIC_CACHE_DIMENSIONS.join(","),
  GATEWAY_SECRET_REF_PREFIX: SECRET_REF_PREFIX,
};

export const gatewayPermissions = [...VECTOR_PERMISSIONS, ...SECRET_REF_PERMISSIONS];

/**
 * Node 24 on arm64 (Graviton: cheaper per GB-second than x86, and nothing in the bundles is native), bundled as
 * infra/lambda-bundle.ts says (code splitting: chat loads 1.4 MB at init instead of 4.9 MB, bench).
 */
export const NODE_RUNTIME = { runtime: "nodejs24.x", architecture: "arm64", nodejs: LAMBDA_NODEJS } as const;

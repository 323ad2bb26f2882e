import type { VectorIndex } from "../../store/vector-index.ts";
import { AesGcmSecrets, parseMasterKey } from "../../store/aes-gcm.ts";
import type { Blobs, Queue, Secrets, Stores } from "../../store/ports.ts";
import { CachingSecretResolver } from "../../store/secret-refs.ts";
import { AwsSecretResolver } from "./aws-secret-refs.ts";
import { DynamoClient } from "./dynamo-client.ts";
import { DynamoCounters } from "./dynamo-counters.ts";
import { DynamoLogSink } from "./dynamo-log-sink.ts";
import { DynamoRecords } from "./dynamo-records.ts";
import { lazyPort } from "./lazy.ts";

export interface AwsStoresOptions {
  tableName: string;
  bucketName: string;
  /** Logical queue name (dead-letter queues included, e.g. `exports-dlq`) -> SQS queue URL. */
  queueUrls: Record<string, string>;
  /** 32 raw bytes or their base64; defaults to GATEWAY_MASTER_KEY. Ignored when kmsKeyId is given. */
  masterKey?: Uint8Array | string;
  /** Seal secrets with this KMS key instead of a master key. */
  kmsKeyId?: string;
  /** The semantic cache's S3 Vectors bucket and the dimensions it has an index for (infra/vectors.ts). */
  vectorBucketName?: string;
  vectorDimensions?: readonly number[];
  /** Service endpoints, for emulators in tests. */
  endpoints?: {
    dynamodb?: string;
    s3?: string;
    sqs?: string;
    kms?: string;
    s3vectors?: string;
    secretsmanager?: string;
    ssm?: string;
  };
  /** Secret references: the name prefix they must have and how long a resolved value is kept. */
  secretRefs?: { prefix?: string; cacheMs?: number };
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Path-style S3 URLs; defaults to true when an S3 endpoint is given (emulators have no bucket DNS). */
  forcePathStyle?: boolean;
  /** Attempts per call (default 3); tests of unreachable services use 1. */
  maxAttempts?: number;
}

/** Every store of the AWS platform: DynamoDB single table, S3 bucket, SQS queues, AES-GCM or KMS secrets. */
export function createAwsStores(options: AwsStoresOptions): Stores {
  const common = {
    region: options.region ?? process.env.AWS_REGION ?? "us-east-1",
    credentials: options.credentials,
    maxAttempts: options.maxAttempts,
  };
  const endpoints = options.endpoints ?? {};
  // DynamoDB, on every request path, goes through a small JSON client instead of the SDK (cold start); S3,
  // SQS and KMS stay on the SDK and are loaded on first use: the data-plane functions rarely need them.
  const dynamo = new DynamoClient({ ...common, endpoint: endpoints.dynamodb });
  const clients: Array<{ destroy(): void }> = [dynamo];
  const blobs = lazyPort<Blobs>(async () => {
    const [{ S3Client }, { S3Blobs }] = await Promise.all([import("@aws-sdk/client-s3"), import("./s3-blobs.ts")]);
    const s3 = new S3Client({
      ...common,
      endpoint: endpoints.s3,
      forcePathStyle: options.forcePathStyle ?? endpoints.s3 !== undefined,
    });
    clients.push(s3);
    return new S3Blobs(s3, options.bucketName);
    // S3's presigned URLs are served by S3, never by the gateway.
  }, ["verifySignedUrl"]);
  const queue = lazyPort<Queue>(async () => {
    const [{ SQSClient }, { SqsQueue }] = await Promise.all([import("@aws-sdk/client-sqs"), import("./sqs-queue.ts")]);
    const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
    clients.push(sqs);
    return new SqsQueue(sqs, options.queueUrls);
  });
  const secrets = options.kmsKeyId
    ? lazyPort<Secrets>(async () => {
        const [{ KMSClient }, { KmsSecrets }] = await Promise.all([
          import("@aws-sdk/client-kms"),
          import("./kms-secrets.ts"),
        ]);
        const kms = new KMSClient({ ...common, endpoint: endpoints.kms });
        clients.push(kms);
        return new KmsSecrets(kms, options.kmsKeyId!);
      }).port
    : masterKeySecrets(options.masterKey);
  const vectors = options.vectorBucketName
    ? lazyPort<VectorIndex>(async () => {
        const [{ S3VectorsClient }, { S3VectorsIndex }] = await Promise.all([
          import("@aws-sdk/client-s3vectors"),
          import("./s3-vectors-index.ts"),
        ]);
        const client = new S3VectorsClient({ ...common, endpoint: endpoints.s3vectors });
        clients.push(client);
        return new S3VectorsIndex(client, {
          bucketName: options.vectorBucketName!,
          dimensions: options.vectorDimensions ?? [],
        });
      }).port
    : missingVectorBucket();
  const secretClient = <T extends { destroy(): void }>(build: () => Promise<T>) => {
    let client: Promise<T> | undefined;
    return () => {
      client ??= build().then((built) => {
        clients.push(built);
        return built;
      });
      return client;
    };
  };
  const secretRefs = new CachingSecretResolver(
    new AwsSecretResolver(
      {
        secretsManager: secretClient(async () => {
          const { SecretsManagerClient } = await import("@aws-sdk/client-secrets-manager");
          return new SecretsManagerClient({ ...common, endpoint: endpoints.secretsmanager });
        }),
        ssm: secretClient(async () => {
          const { SSMClient } = await import("@aws-sdk/client-ssm");
          return new SSMClient({ ...common, endpoint: endpoints.ssm });
        }),
      },
      { prefix: options.secretRefs?.prefix },
    ),
    options.secretRefs?.cacheMs ?? 60_000,
  );
  const records = new DynamoRecords(dynamo, options.tableName);
  return {
    records,
    logSink: new DynamoLogSink(records, blobs.port, dynamo, options.tableName),
    counters: new DynamoCounters(dynamo, options.tableName),
    blobs: blobs.port,
    queue: queue.port,
    secrets,
    vectors,
    secretRefs,
    async close() {
      for (const client of clients) client.destroy();
    },
  };
}

function masterKeyFromEnv(env: Record<string, string | undefined> = process.env): Buffer | undefined {
  const value = env.GATEWAY_MASTER_KEY;
  return value ? parseMasterKey(value) : undefined;
}

function masterKeySecrets(masterKey: Uint8Array | string | undefined): Secrets {
  const key = typeof masterKey === "string" ? parseMasterKey(masterKey) : (masterKey ?? masterKeyFromEnv());
  if (key) return new AesGcmSecrets(key);
  // Functions that never touch secrets need no key, so the missing key is reported where it matters.
  const missing = () => Promise.reject(new Error("secrets need GATEWAY_MASTER_KEY (or masterKey / kmsKeyId)"));
  return { encrypt: missing, decrypt: missing };
}

function missingVectorBucket(): VectorIndex {
  // Only the semantic cache uses the index, so the missing bucket is reported where it matters.
  const missing = () => Promise.reject(new Error("the semantic cache needs GATEWAY_VECTOR_BUCKET (infra/vectors.ts)"));
  return { nearest: missing, add: missing, remove: missing };
}

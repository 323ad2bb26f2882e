import { DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { KMSClient } from "@aws-sdk/client-kms";
import { S3Client } from "@aws-sdk/client-s3";
import { SQSClient } from "@aws-sdk/client-sqs";
import { DynamoDBDocumentClient } from "@aws-sdk/lib-dynamodb";
import { AesGcmSecrets, parseMasterKey } from "../../store/aes-gcm.ts";
import type { Secrets, Stores } from "../../store/ports.ts";
import { DynamoCounters } from "./dynamo-counters.ts";
import { DynamoRecords } from "./dynamo-records.ts";
import { KmsSecrets, masterKeyFromEnv } from "./kms-secrets.ts";
import { S3Blobs } from "./s3-blobs.ts";
import { SqsQueue } from "./sqs-queue.ts";

export interface AwsStoresOptions {
  tableName: string;
  bucketName: string;
  /** Logical queue name (dead-letter queues included, e.g. `batches-dlq`) -> SQS queue URL. */
  queueUrls: Record<string, string>;
  /** 32 raw bytes or their base64; defaults to GATEWAY_MASTER_KEY. Ignored when kmsKeyId is given. */
  masterKey?: Uint8Array | string;
  /** Seal secrets with this KMS key instead of a master key. */
  kmsKeyId?: string;
  /** Service endpoints, for emulators in tests. */
  endpoints?: { dynamodb?: string; s3?: string; sqs?: string; kms?: string };
  region?: string;
  credentials?: { accessKeyId: string; secretAccessKey: string; sessionToken?: string };
  /** Path-style S3 URLs; defaults to true when an S3 endpoint is given (emulators have no bucket DNS). */
  forcePathStyle?: boolean;
  /** SDK attempts per call (default 3); tests of unreachable services use 1. */
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
  const dynamo = new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb });
  // removeUndefinedValues: attributes set to undefined are dropped, as JSON (and the SQLite adapter) would.
  const documents = DynamoDBDocumentClient.from(dynamo, { marshallOptions: { removeUndefinedValues: true } });
  const s3 = new S3Client({
    ...common,
    endpoint: endpoints.s3,
    forcePathStyle: options.forcePathStyle ?? endpoints.s3 !== undefined,
  });
  const sqs = new SQSClient({ ...common, endpoint: endpoints.sqs });
  const kms = options.kmsKeyId ? new KMSClient({ ...common, endpoint: endpoints.kms }) : undefined;
  return {
    records: new DynamoRecords(documents, options.tableName),
    counters: new DynamoCounters(documents, options.tableName),
    blobs: new S3Blobs(s3, options.bucketName),
    queue: new SqsQueue(sqs, options.queueUrls),
    secrets: kms ? new KmsSecrets(kms, options.kmsKeyId!) : masterKeySecrets(options.masterKey),
    async close() {
      for (const client of [documents, dynamo, s3, sqs, kms]) client?.destroy();
    },
  };
}

function masterKeySecrets(masterKey: Uint8Array | string | undefined): Secrets {
  const key = typeof masterKey === "string" ? parseMasterKey(masterKey) : (masterKey ?? masterKeyFromEnv());
  if (key) return new AesGcmSecrets(key);
  // Functions that never touch secrets need no key, so the missing key is reported where it matters.
  const missing = () => Promise.reject(new Error("secrets need GATEWAY_MASTER_KEY (or masterKey / kmsKeyId)"));
  return { encrypt: missing, decrypt: missing };
}

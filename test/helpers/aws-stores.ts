import { randomBytes } from "node:crypto";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { type EmulatorEndpoints, TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";

/** The AWS stores pointed at the test run's emulators (dynalite, fauxqs), with a fresh master key. */
export function emulatorStores(emulators: EmulatorEndpoints): Stores {
  return createAwsStores({
    tableName: emulators.tableName,
    bucketName: emulators.bucketName,
    queueUrls: emulators.queueUrls,
    masterKey: randomBytes(32),
    endpoints: { dynamodb: emulators.dynamodb, s3: emulators.fauxqs, sqs: emulators.fauxqs },
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
  });
}

/** The environment infra/ gives a function, pointed at the emulators and at `tableName` (a table of its own). */
export function lambdaEnv(emulators: EmulatorEndpoints, tableName: string): Record<string, string> {
  return {
    GATEWAY_PLATFORM: "aws",
    GATEWAY_TABLE: tableName,
    GATEWAY_BUCKET: emulators.bucketName,
    GATEWAY_QUEUE_URLS: JSON.stringify(emulators.queueUrls),
    GATEWAY_MASTER_KEY: randomBytes(32).toString("base64"),
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_SQS: emulators.fauxqs,
    AWS_ENDPOINT_URL_S3: emulators.fauxqs,
  };
}

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

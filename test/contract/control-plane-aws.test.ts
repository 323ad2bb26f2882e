import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, inject } from "vitest";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import type { Stores } from "../../core/store/ports.ts";
import { TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { controlContract } from "./control.contract.ts";
import { policiesContract } from "./policies.contract.ts";

const emulators = inject("emulators");
let stores: Stores;

beforeAll(() => {
  stores = createAwsStores({
    tableName: emulators.tableName,
    bucketName: emulators.bucketName,
    queueUrls: emulators.queueUrls,
    masterKey: randomBytes(32),
    endpoints: { dynamodb: emulators.dynamodb, s3: emulators.fauxqs, sqs: emulators.fauxqs },
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
  });
});

afterAll(async () => {
  await stores?.close();
});

describe("AWS stores (dynalite)", () => {
  policiesContract(() => stores);
  describe("control-plane storage", () => controlContract(() => stores));
});

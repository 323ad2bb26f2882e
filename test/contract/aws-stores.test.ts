import { emulatorStores } from "../helpers/aws-stores.ts";
import { randomBytes, randomUUID } from "node:crypto";
import { type DecryptCommand, EncryptCommand } from "@aws-sdk/client-kms";
import { SQSClient } from "@aws-sdk/client-sqs";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { KmsSecrets } from "../../core/platform/aws/kms-secrets.ts";
import { SqsQueue } from "../../core/platform/aws/sqs-queue.ts";
import { AesGcmSecrets } from "../../core/store/aes-gcm.ts";
import { type Stores, StoreUnavailableError } from "../../core/store/ports.ts";
import { createQueuePair, TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { blobsContract } from "./blobs.contract.ts";
import { countersContract } from "./counters.contract.ts";
import { logSinkContract } from "./log-sink.contract.ts";
import { queueContract } from "./queue.contract.ts";
import { recordsContract } from "./records.contract.ts";
import { secretsContract } from "./secrets.contract.ts";

const emulators = inject("emulators");
let stores: Stores;
let sqs: SQSClient;

beforeAll(() => {
  stores = emulatorStores(emulators);
  sqs = new SQSClient({ endpoint: emulators.fauxqs, region: TEST_REGION, credentials: TEST_CREDENTIALS });
});

afterAll(async () => {
  await stores?.close();
  sqs?.destroy();
});

describe("AWS stores (dynalite + fauxqs)", () => {
  recordsContract(() => stores.records);
  countersContract(() => stores.counters);
  blobsContract(() => stores.blobs);
  logSinkContract(() => stores);
  queueContract(async () => {
    // A fresh queue pair per test, with the RedrivePolicy infra gives the real ones.
    const name = `q-${randomUUID()}`;
    return { queue: new SqsQueue(sqs, await createQueuePair(emulators.fauxqs, name)), name };
  });
  secretsContract(() => new AesGcmSecrets(randomBytes(32)));

  describe("AWS specifics", () => {
    it("serves the configured logical queues", async () => {
      const id = await stores.queue.send("exports", { export: 1 });
      const [message] = await stores.queue.receive("exports", { max: 1, visibilityTimeoutSeconds: 5, waitSeconds: 1 });
      expect(message).toMatchObject({ id, body: { export: 1 }, attempts: 1 });
      await stores.queue.ack("exports", message.receipt);
      await expect(stores.queue.send("unknown", {})).rejects.toThrow(/no SQS queue URL/);
    });

    it("answers StoreUnavailableError when the services cannot be reached", async () => {
      const dead = "http://127.0.0.1:9"; // discard port: nothing listens
      const offline = createAwsStores({
        tableName: "t",
        bucketName: "b",
        queueUrls: { q: `${dead}/000000000000/q` },
        masterKey: randomBytes(32),
        endpoints: { dynamodb: dead, s3: dead, sqs: dead },
        region: TEST_REGION,
        credentials: TEST_CREDENTIALS,
        maxAttempts: 1,
      });
      try {
        await expect(offline.records.get("p", "s")).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(offline.counters.add("c", 1)).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(offline.blobs.head("k")).rejects.toBeInstanceOf(StoreUnavailableError);
        await expect(offline.queue.send("q", {})).rejects.toBeInstanceOf(StoreUnavailableError);
      } finally {
        await offline.close();
      }
    });

    it("shapes KMS requests with the key id and an encryption context", async () => {
      const sent: unknown[] = [];
      const fakeKms = {
        async send(command: EncryptCommand | DecryptCommand) {
          sent.push(command);
          if (command instanceof EncryptCommand) {
            return { CiphertextBlob: Buffer.from(`sealed:${Buffer.from(command.input.Plaintext!).toString()}`) };
          }
          const blob = Buffer.from(command.input.CiphertextBlob!).toString();
          return { Plaintext: Buffer.from(blob.replace(/^sealed:/, "")) };
        },
      };
      const secrets = new KmsSecrets(fakeKms as never, "alias/gateway");
      const sealed = await secrets.encrypt("sk-123");
      expect(sealed).toBe(`kms1:${Buffer.from("sealed:sk-123").toString("base64")}`);
      expect(await secrets.decrypt(sealed)).toBe("sk-123");
      const [encrypt, decrypt] = sent as [EncryptCommand, DecryptCommand];
      expect(encrypt.input).toMatchObject({ KeyId: "alias/gateway", EncryptionContext: { purpose: "gateway-secret" } });
      expect(decrypt.input).toMatchObject({ KeyId: "alias/gateway", EncryptionContext: { purpose: "gateway-secret" } });
      await expect(secrets.decrypt("v1:a:b:c")).rejects.toThrow();
    });
  });
});

import { randomBytes } from "node:crypto";
import { ensureOrganisation } from "../../core/control/organisation/bootstrap.ts";
import { loadSettings } from "../../core/config/settings.ts";
import { createApp } from "../../core/http/app.ts";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { createScheduledHandler } from "../../core/platform/aws/scheduled-handler.ts";
import { createSqsBatchHandler, type SqsRecord } from "../../core/platform/aws/sqs-batch-handler.ts";
import { type RunningServer, startServer } from "../../core/platform/local/server.ts";
import { ALL_HANDLERS } from "../../core/routes/handlers.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";
import type { Services } from "../../core/services.ts";
import { createServices } from "../../core/platform/services.ts";
import { deadLetterQueueName, QUEUE_NAMES, type QueueName } from "../../core/store/ports.ts";
import {
  createQueuePair,
  createTable,
  type EmulatorEndpoints,
  TEST_CREDENTIALS,
  TEST_REGION,
} from "../setup/emulators.ts";

/**
 * The gateway on the AWS store family: every route family over DynamoDB (dynalite), S3 and SQS (fauxqs), with a
 * table and queues of its own (so tests in parallel never take each other's messages). Queue work is delivered
 * the way Lambda's SQS event source does it: messages received from SQS are handed to the Lambda SQS handler
 * (core/platform/aws/sqs-batch-handler.ts) and those it does not report as failed are deleted; scheduled tasks run
 * through the scheduled Lambda's handler. The HTTP edge is the local server (the Lambda edge is tested apart).
 */
export interface AwsGateway {
  url: string;
  adminKey: string;
  services: Services;
  /** One delivery round on each queue: receive up to 10, run the Lambda handler, delete what succeeded. */
  deliver(): Promise<number>;
  /** One tick of the scheduled worker. */
  tick(): Promise<void>;
  close(): Promise<void>;
}

export async function startAwsGateway(
  emulators: EmulatorEndpoints,
  env: Record<string, string> = {},
): Promise<AwsGateway> {
  const suffix = randomBytes(4).toString("hex");
  const tableName = `gateway-${suffix}`;
  await createTable(emulators.dynamodb, tableName);
  const queueUrls: Record<string, string> = {};
  for (const name of QUEUE_NAMES) {
    const urls = await createQueuePair(emulators.fauxqs, `${name}-${suffix}`);
    queueUrls[name] = urls[`${name}-${suffix}`]!;
    queueUrls[deadLetterQueueName(name)] = urls[deadLetterQueueName(`${name}-${suffix}`)]!;
  }
  const settings = loadSettings({
    GATEWAY_PLATFORM: "aws",
    TRUSTED_CUSTOM_HOSTS: "127.0.0.1,localhost",
    GATEWAY_TABLE: tableName,
    GATEWAY_BUCKET: emulators.bucketName,
    ...env,
  });
  const stores = createAwsStores({
    tableName,
    bucketName: emulators.bucketName,
    queueUrls,
    masterKey: randomBytes(32),
    endpoints: { dynamodb: emulators.dynamodb, s3: emulators.fauxqs, sqs: emulators.fauxqs },
    region: TEST_REGION,
    credentials: TEST_CREDENTIALS,
  });
  const services = createServices(settings, stores);
  const adminKey = `gw-admin-${randomBytes(16).toString("hex")}`;
  await ensureOrganisation(stores.records, { adminKeySecret: adminKey });
  const app = createApp({ families: ROUTE_FAMILIES, handlers: ALL_HANDLERS, services });
  const server: RunningServer = await startServer(app, {
    port: 0,
    host: "127.0.0.1",
    pending: new Set(),
    maxHeaderBytes: settings.GATEWAY_MAX_HEADER_BYTES,
  });
  const sqsHandlers = Object.fromEntries(
    QUEUE_NAMES.map((name) => [name, createSqsBatchHandler(name, async () => services)]),
  ) as Record<QueueName, ReturnType<typeof createSqsBatchHandler>>;
  const scheduled = createScheduledHandler(async () => services);

  return {
    url: server.url,
    adminKey,
    services,
    async deliver() {
      let delivered = 0;
      for (const name of QUEUE_NAMES) {
        const messages = await stores.queue.receive(name, { max: 10, visibilityTimeoutSeconds: 60 });
        if (messages.length === 0) continue;
        delivered += messages.length;
        const records: SqsRecord[] = messages.map((message) => ({
          messageId: message.id,
          receiptHandle: message.receipt,
          body: JSON.stringify(message.body),
          attributes: { ApproximateReceiveCount: String(message.attempts) },
        }));
        const { batchItemFailures } = await sqsHandlers[name]({ Records: records });
        const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
        for (const message of messages) {
          if (failed.has(message.id)) await stores.queue.release(name, message.receipt, 0);
          else await stores.queue.ack(name, message.receipt);
        }
      }
      return delivered;
    },
    async tick() {
      await scheduled({}, { getRemainingTimeInMillis: () => 60_000 });
    },
    async close() {
      await server.close();
      await services.analytics.flush().catch(() => {});
      await stores.close();
    },
  };
}

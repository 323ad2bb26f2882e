/**
 * In-process AWS emulators for the contract tests: dynalite (DynamoDB) and fauxqs (SQS + S3), both in memory
 * on 127.0.0.1 with OS-assigned ports, plus the resources the AWS stores expect.
 */
import type { AddressInfo } from "node:net";
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from "@aws-sdk/client-dynamodb";
import { CreateBucketCommand, S3Client } from "@aws-sdk/client-s3";
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from "@aws-sdk/client-sqs";
import dynalite from "dynalite";
import { buildApp } from "fauxqs";
import { deadLetterQueueName, MAX_RECEIVES, QUEUE_NAMES } from "../../core/store/ports.ts";

export const TEST_REGION = "us-east-1";
/** Emulators accept any credentials; fixed ones keep the SDK from searching the machine for real ones. */
export const TEST_CREDENTIALS = { accessKeyId: "test", secretAccessKey: "test" };

export interface EmulatorEndpoints {
  dynamodb: string;
  /** fauxqs serves SQS and S3 on one endpoint. */
  fauxqs: string;
  tableName: string;
  bucketName: string;
  /** Logical queue name (DLQs included) -> queue URL, for QUEUE_NAMES. */
  queueUrls: Record<string, string>;
}

export interface Emulators {
  endpoints: EmulatorEndpoints;
  stop(): Promise<void>;
}

export async function startEmulators(): Promise<Emulators> {
  const [dynamo, fauxqs] = await Promise.all([startDynalite(), startFauxqs()]);
  const tableName = "gateway";
  const bucketName = "gateway-blobs";
  const [queueUrls] = await Promise.all([
    Promise.all(QUEUE_NAMES.map((name) => createQueuePair(fauxqs.endpoint, name))).then((pairs) =>
      Object.assign({}, ...pairs),
    ),
    createTable(dynamo.endpoint, tableName),
    createBucket(fauxqs.endpoint, bucketName),
  ]);
  return {
    endpoints: { dynamodb: dynamo.endpoint, fauxqs: fauxqs.endpoint, tableName, bucketName, queueUrls },
    async stop() {
      await Promise.all([dynamo.stop(), fauxqs.stop()]);
    },
  };
}

interface Running {
  endpoint: string;
  stop(): Promise<void>;
}

export async function startDynalite(): Promise<Running> {
  // Tables become ACTIVE at once instead of after dynalite's default 500 ms.
  const server = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

export async function startFauxqs(): Promise<Running> {
  // buildApp rather than startFauxqs(): the latter always listens on 0.0.0.0, and tests stay on loopback.
  const app = buildApp({ logger: false });
  const address = await app.listen({ port: 0, host: "127.0.0.1" });
  return { endpoint: address, stop: () => app.close() };
}

const clientConfig = (endpoint: string) => ({ endpoint, region: TEST_REGION, credentials: TEST_CREDENTIALS });

/** The single table of DynamoRecords / DynamoCounters: pk+sk, index gsi1 on gsi1pk+gsi1sk. */
export async function createTable(endpoint: string, tableName: string): Promise<void> {
  const client = new DynamoDBClient(clientConfig(endpoint));
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: "PAY_PER_REQUEST",
        AttributeDefinitions: ["pk", "sk", "gsi1pk", "gsi1sk"].map((name) => ({
          AttributeName: name,
          AttributeType: "S",
        })),
        KeySchema: [
          { AttributeName: "pk", KeyType: "HASH" },
          { AttributeName: "sk", KeyType: "RANGE" },
        ],
        GlobalSecondaryIndexes: [
          {
            IndexName: "gsi1",
            KeySchema: [
              { AttributeName: "gsi1pk", KeyType: "HASH" },
              { AttributeName: "gsi1sk", KeyType: "RANGE" },
            ],
            Projection: { ProjectionType: "ALL" },
          },
        ],
      }),
    );
    for (;;) {
      const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
      if (Table?.TableStatus === "ACTIVE") return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  } finally {
    client.destroy();
  }
}

export async function createBucket(endpoint: string, bucketName: string): Promise<void> {
  const client = new S3Client({ ...clientConfig(endpoint), forcePathStyle: true });
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucketName }));
  } finally {
    client.destroy();
  }
}

/**
 * Creates `name` and its dead-letter queue, wired the way infra does it: a RedrivePolicy with
 * maxReceiveCount = MAX_RECEIVES. Returns the URLs under their logical names.
 */
export async function createQueuePair(endpoint: string, name: string): Promise<Record<string, string>> {
  const client = new SQSClient(clientConfig(endpoint));
  try {
    const dlqName = deadLetterQueueName(name);
    const { QueueUrl: dlqUrl } = await client.send(new CreateQueueCommand({ QueueName: dlqName }));
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }),
    );
    const { QueueUrl: url } = await client.send(
      new CreateQueueCommand({
        QueueName: name,
        Attributes: {
          RedrivePolicy: JSON.stringify({
            deadLetterTargetArn: Attributes!.QueueArn,
            maxReceiveCount: String(MAX_RECEIVES),
          }),
        },
      }),
    );
    return { [name]: url!, [dlqName]: dlqUrl! };
  } finally {
    client.destroy();
  }
}

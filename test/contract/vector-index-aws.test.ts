import { CreateIndexCommand, CreateVectorBucketCommand, S3VectorsClient } from "@aws-sdk/client-s3vectors";
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAwsStores } from "../../core/platform/aws/aws-stores.ts";
import { s3VectorIndexName } from "../../core/platform/aws/s3-vector-names.ts";
import { S3VectorsIndex } from "../../core/platform/aws/s3-vectors-index.ts";
import { servicesFromEnv } from "../../core/platform/aws/services-from-env.ts";
import { StoreUnavailableError } from "../../core/store/ports.ts";
import { type S3VectorsMock, startS3VectorsMock } from "../mocks/s3-vectors.ts";
import { TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";
import { CONTRACT_DIMENSIONS, seededVector, vectorIndexContract } from "./vector-index.contract.ts";

const BUCKET = "gateway-semantic-cache";
const HOUR = 3_600_000;

let mock: S3VectorsMock;
let client: S3VectorsClient;
let index: S3VectorsIndex;

beforeAll(async () => {
  mock = await startS3VectorsMock();
  client = new S3VectorsClient({ endpoint: mock.url, region: TEST_REGION, credentials: TEST_CREDENTIALS });
  // As infra/vectors.ts does: one bucket, one cosine float32 index per dimension.
  await client.send(new CreateVectorBucketCommand({ vectorBucketName: BUCKET }));
  for (const dimension of CONTRACT_DIMENSIONS) {
    await client.send(
      new CreateIndexCommand({
        vectorBucketName: BUCKET,
        indexName: s3VectorIndexName(dimension),
        dataType: "float32",
        dimension,
        distanceMetric: "cosine",
      }),
    );
  }
  index = new S3VectorsIndex(client, { bucketName: BUCKET, dimensions: CONTRACT_DIMENSIONS });
});

afterAll(async () => {
  client?.destroy();
  await mock?.close();
});

describe("AWS vector index (S3 Vectors, against the wire-protocol mock)", () => {
  vectorIndexContract(() => index);

  describe("AWS specifics", () => {
    it("deletes an expired vector from S3 Vectors when a query meets it", async () => {
      const scope = `scope-${randomUUID()}`;
      await index.add(scope, "short", seededVector(8, 1), Date.now() + 100);
      const stored = () =>
        mock.stored(BUCKET, s3VectorIndexName(8)).filter((vector) => vector.metadata?.scope === scope);
      expect(stored()).toHaveLength(1);
      expect(stored()[0]!.metadata).toEqual({ scope, expiresAt: expect.any(Number) });
      await sleep(200);
      expect(await index.nearest(scope, seededVector(8, 1), 0.5)).toBeUndefined();
      expect(stored()).toHaveLength(0);
    });

    it("queries with the scope as an exact metadata filter, and keys that keep scopes apart", async () => {
      const scope = `scope-${randomUUID()}`;
      await index.add(scope, "entry", seededVector(4, 2), Date.now() + HOUR);
      const before = mock.requests.length;
      await index.nearest(scope, seededVector(4, 2), 0.9);
      const query = mock.requests
        .slice(before)
        .find((request) => request.path === "/QueryVectors")!
        .json();
      expect(query).toMatchObject({
        vectorBucketName: BUCKET,
        indexName: s3VectorIndexName(4),
        filter: { scope: { $eq: scope } },
        returnMetadata: true,
        returnDistance: true,
      });
      // A scope that is a prefix of another, with ids that would join to the same string, stays apart.
      await index.add("a/", "b", seededVector(4, 3), Date.now() + HOUR);
      await index.add("a", "/b", seededVector(4, 4), Date.now() + HOUR);
      expect((await index.nearest("a/", seededVector(4, 3), 0.99))?.id).toBe("b");
      expect((await index.nearest("a", seededVector(4, 4), 0.99))?.id).toBe("/b");
    });

    it("answers a miss for a dimension without an index, and refuses to store one", async () => {
      expect(await index.nearest("scope", seededVector(16, 1), -1)).toBeUndefined();
      await expect(index.add("scope", "id", seededVector(16, 1), Date.now() + HOUR)).rejects.toThrow(
        /no S3 Vectors index for 16-dimension/,
      );
    });

    it("answers StoreUnavailableError when S3 Vectors cannot be reached", async () => {
      const offline = new S3VectorsClient({
        endpoint: "http://127.0.0.1:9",
        region: TEST_REGION,
        credentials: TEST_CREDENTIALS,
        maxAttempts: 1,
      });
      const unreachable = new S3VectorsIndex(offline, { bucketName: BUCKET, dimensions: [4] });
      await expect(unreachable.nearest("scope", seededVector(4, 1), 0.5)).rejects.toBeInstanceOf(StoreUnavailableError);
      await expect(unreachable.add("scope", "id", seededVector(4, 1), Date.now() + HOUR)).rejects.toBeInstanceOf(
        StoreUnavailableError,
      );
      offline.destroy();
    });

    it("is stores.vectors of the AWS stores, configured from the environment", async () => {
      const services = servicesFromEnv({
        GATEWAY_PLATFORM: "aws",
        GATEWAY_TABLE: "table",
        GATEWAY_BUCKET: "bucket",
        GATEWAY_QUEUE_URLS: "{}",
        GATEWAY_MASTER_KEY: Buffer.alloc(32, 1).toString("base64"),
        GATEWAY_VECTOR_BUCKET: BUCKET,
        GATEWAY_VECTOR_DIMENSIONS: "4, 8",
        AWS_REGION: TEST_REGION,
      });
      // The endpoint comes from the SDK's own AWS_ENDPOINT_URL_S3VECTORS in Lambda; here through the options.
      const stores = createAwsStores({
        tableName: "table",
        bucketName: "bucket",
        queueUrls: {},
        masterKey: Buffer.alloc(32, 1),
        vectorBucketName: BUCKET,
        vectorDimensions: [4, 8],
        endpoints: { s3vectors: mock.url },
        region: TEST_REGION,
        credentials: TEST_CREDENTIALS,
      });
      try {
        const scope = `scope-${randomUUID()}`;
        await stores.vectors.add(scope, "entry", seededVector(4, 5), Date.now() + HOUR);
        expect((await stores.vectors.nearest(scope, seededVector(4, 5), 0.99))?.id).toBe("entry");
        expect(services.stores.vectors).toBeDefined();
        const unconfigured = createAwsStores({
          tableName: "t",
          bucketName: "b",
          queueUrls: {},
          masterKey: Buffer.alloc(32),
        });
        await expect(unconfigured.vectors.nearest("s", seededVector(4, 1), 0.5)).rejects.toThrow(
          /GATEWAY_VECTOR_BUCKET/,
        );
        await unconfigured.close();
      } finally {
        await stores.close();
        await services.stores.close();
      }
    });

    it("rejects a bad GATEWAY_VECTOR_DIMENSIONS at start", () => {
      expect(() =>
        servicesFromEnv({
          GATEWAY_TABLE: "t",
          GATEWAY_BUCKET: "b",
          GATEWAY_QUEUE_URLS: "{}",
          GATEWAY_VECTOR_DIMENSIONS: "1536,big",
        }),
      ).toThrow(/GATEWAY_VECTOR_DIMENSIONS/);
    });
  });
});

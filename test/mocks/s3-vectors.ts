import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../helpers/mock-server.ts";

/**
 * A mock Amazon S3 Vectors service, in memory, over real HTTP: the REST-JSON protocol of
 * `@aws-sdk/client-s3vectors` (API 2025-07-15), as its serializers show: every operation is `POST /<Operation>`
 * with a JSON body, answered 200 with a JSON body; errors carry their name in `x-amzn-errortype` and
 * `{"message"}`. Implemented: CreateVectorBucket, CreateIndex, GetIndex, PutVectors, GetVectors, QueryVectors,
 * DeleteVectors, ListVectors. It enforces what the service does and an adapter could get wrong: SigV4-signed
 * requests, vector dimension equal to the index's, float32 values, no zero vectors under cosine, topK 1..100,
 * at most 500 vectors per PutVectors / DeleteVectors, metadata filters (`$eq $ne $gt $gte $lt $lte $in $nin
 * $exists $and $or`, and `{key: value}` for `$eq`). Query distances are cosine distances (1 - similarity) or
 * squared-free euclidean distances, as the index was created with.
 */

type Metadata = Record<string, unknown>;

interface StoredVector {
  key: string;
  data: number[];
  metadata?: Metadata;
}

interface VectorIndexState {
  name: string;
  dimension: number;
  distanceMetric: "cosine" | "euclidean";
  vectors: Map<string, StoredVector>;
}

export interface S3VectorsMock extends MockServer {
  /** Bucket name -> index name -> index. */
  buckets: Map<string, Map<string, VectorIndexState>>;
  /** The vectors stored in one index (for assertions). */
  stored(bucket: string, index: string): StoredVector[];
}

const MAX_TOP_K = 100;
const MAX_BATCH = 500;

class ServiceError extends Error {
  readonly status: number;
  readonly type: string;
  constructor(status: number, type: string, message: string) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

const validation = (message: string) => new ServiceError(400, "ValidationException", message);
const notFound = (message: string) => new ServiceError(404, "NotFoundException", message);

export async function startS3VectorsMock(): Promise<S3VectorsMock> {
  const buckets = new Map<string, Map<string, VectorIndexState>>();

  const bucketOf = (body: any) => {
    const bucket = buckets.get(body.vectorBucketName);
    if (!bucket) throw notFound(`vector bucket ${body.vectorBucketName} does not exist`);
    return bucket;
  };
  const indexOf = (body: any) => {
    if (typeof body.indexName !== "string") throw validation("indexName is required");
    const index = bucketOf(body).get(body.indexName);
    if (!index) throw notFound(`index ${body.indexName} does not exist`);
    return index;
  };

  const operations: Record<string, (body: any) => unknown> = {
    CreateVectorBucket(body) {
      if (!/^[a-z0-9][a-z0-9-]{1,61}[a-z0-9]$/.test(body.vectorBucketName ?? ""))
        throw validation("invalid vectorBucketName");
      if (buckets.has(body.vectorBucketName)) throw new ServiceError(409, "ConflictException", "bucket exists");
      buckets.set(body.vectorBucketName, new Map());
      return { vectorBucketArn: `arn:aws:s3vectors:us-east-1:000000000000:bucket/${body.vectorBucketName}` };
    },
    CreateIndex(body) {
      const bucket = bucketOf(body);
      if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(body.indexName ?? "")) throw validation("invalid indexName");
      if (body.dataType !== "float32") throw validation("dataType must be float32");
      if (!Number.isInteger(body.dimension) || body.dimension < 1 || body.dimension > 4096)
        throw validation("dimension must be 1..4096");
      if (body.distanceMetric !== "cosine" && body.distanceMetric !== "euclidean")
        throw validation("distanceMetric must be cosine or euclidean");
      if (bucket.has(body.indexName)) throw new ServiceError(409, "ConflictException", "index exists");
      bucket.set(body.indexName, {
        name: body.indexName,
        dimension: body.dimension,
        distanceMetric: body.distanceMetric,
        vectors: new Map(),
      });
      return {
        indexArn: `arn:aws:s3vectors:us-east-1:000000000000:bucket/${body.vectorBucketName}/index/${body.indexName}`,
      };
    },
    GetIndex(body) {
      const index = indexOf(body);
      return {
        index: {
          vectorBucketName: body.vectorBucketName,
          indexName: index.name,
          indexArn: `arn:aws:s3vectors:us-east-1:000000000000:bucket/${body.vectorBucketName}/index/${index.name}`,
          creationTime: 0,
          dataType: "float32",
          dimension: index.dimension,
          distanceMetric: index.distanceMetric,
        },
      };
    },
    PutVectors(body) {
      const index = indexOf(body);
      if (!Array.isArray(body.vectors) || body.vectors.length < 1 || body.vectors.length > MAX_BATCH)
        throw validation(`vectors must hold 1..${MAX_BATCH} vectors`);
      const checked = body.vectors.map((vector: any) => {
        if (typeof vector?.key !== "string" || vector.key.length < 1 || vector.key.length > 1024)
          throw validation("key must be 1..1024 characters");
        const data = vectorData(vector.data, index);
        if (vector.metadata !== undefined && (typeof vector.metadata !== "object" || Array.isArray(vector.metadata)))
          throw validation("metadata must be a JSON object");
        if (JSON.stringify(vector.metadata ?? {}).length > 2048) throw validation("filterable metadata is over 2 KB");
        return { key: vector.key, data, metadata: vector.metadata };
      });
      for (const vector of checked) index.vectors.set(vector.key, vector);
      return {};
    },
    GetVectors(body) {
      const index = indexOf(body);
      const keys = keyList(body.keys);
      return {
        vectors: keys.flatMap((key) => {
          const vector = index.vectors.get(key);
          if (!vector) return [];
          return [
            {
              key,
              ...(body.returnData ? { data: { float32: vector.data } } : {}),
              ...(body.returnMetadata && vector.metadata ? { metadata: vector.metadata } : {}),
            },
          ];
        }),
      };
    },
    DeleteVectors(body) {
      const index = indexOf(body);
      for (const key of keyList(body.keys)) index.vectors.delete(key);
      return {};
    },
    QueryVectors(body) {
      const index = indexOf(body);
      if (!Number.isInteger(body.topK) || body.topK < 1 || body.topK > MAX_TOP_K)
        throw validation(`topK must be 1..${MAX_TOP_K}`);
      const query = vectorData(body.queryVector, index);
      const scored = [...index.vectors.values()]
        .filter((vector) => body.filter === undefined || matches(vector.metadata ?? {}, body.filter))
        .map((vector) => ({ vector, distance: distance(index.distanceMetric, query, vector.data) }))
        .sort((a, b) => a.distance - b.distance)
        .slice(0, body.topK);
      return {
        vectors: scored.map(({ vector, distance }) => ({
          key: vector.key,
          ...(body.returnDistance ? { distance } : {}),
          ...(body.returnMetadata && vector.metadata ? { metadata: vector.metadata } : {}),
        })),
        distanceMetric: index.distanceMetric,
      };
    },
    ListVectors(body) {
      const index = indexOf(body);
      const all = [...index.vectors.values()];
      const start = body.nextToken ? Number(body.nextToken) : 0;
      const limit = body.maxResults ?? 500;
      const page = all.slice(start, start + limit);
      return {
        vectors: page.map((vector) => ({
          key: vector.key,
          ...(body.returnData ? { data: { float32: vector.data } } : {}),
          ...(body.returnMetadata && vector.metadata ? { metadata: vector.metadata } : {}),
        })),
        ...(start + limit < all.length ? { nextToken: String(start + limit) } : {}),
      };
    },
  };

  const mock = (await startMockServer(async (request: RecordedRequest, res: ServerResponse) => {
    try {
      // The SDK signs every request (SigV4); an unsigned one is refused as the service would.
      if (!/^AWS4-HMAC-SHA256 Credential=/.test(String(request.headers.authorization ?? "")))
        throw new ServiceError(403, "AccessDeniedException", "missing SigV4 authorization");
      const name = request.path.replace(/^\//, "").split("?")[0]!;
      const operation = operations[name];
      if (request.method !== "POST" || !operation) throw new ServiceError(404, "UnknownOperationException", name);
      let body: unknown;
      try {
        body = request.body.length === 0 ? {} : request.json();
      } catch {
        throw validation("body is not JSON");
      }
      sendJson(res, 200, operation(body));
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      sendJson(res, error.status, { message: error.message }, { "x-amzn-errortype": error.type });
    }
  })) as S3VectorsMock;
  mock.buckets = buckets;
  mock.stored = (bucket, index) => [...(buckets.get(bucket)?.get(index)?.vectors.values() ?? [])];
  return mock;
}

function vectorData(data: any, index: VectorIndexState): number[] {
  const values = data?.float32;
  if (!Array.isArray(values) || values.some((value) => typeof value !== "number" || !Number.isFinite(value)))
    throw validation("data.float32 must be an array of finite numbers");
  if (values.length !== index.dimension)
    throw validation(`vector dimension ${values.length} does not match index dimension ${index.dimension}`);
  if (index.distanceMetric === "cosine" && values.every((value) => value === 0))
    throw validation("zero vectors are not allowed with the cosine distance metric");
  return values.map((value) => Math.fround(value));
}

function keyList(keys: unknown): string[] {
  if (!Array.isArray(keys) || keys.length < 1 || keys.length > MAX_BATCH || keys.some((key) => typeof key !== "string"))
    throw validation(`keys must hold 1..${MAX_BATCH} strings`);
  return keys as string[];
}

function distance(metric: "cosine" | "euclidean", a: number[], b: number[]): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  let squared = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
    squared += (a[i]! - b[i]!) ** 2;
  }
  if (metric === "euclidean") return Math.sqrt(squared);
  return 1 - dot / Math.sqrt(normA * normB);
}

/** S3 Vectors metadata filters (a MongoDB-like subset). */
function matches(metadata: Metadata, filter: any): boolean {
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) throw validation("invalid filter");
  return Object.entries(filter).every(([key, condition]) => {
    if (key === "$and" || key === "$or") {
      if (!Array.isArray(condition) || condition.length === 0) throw validation(`${key} needs a non-empty array`);
      return key === "$and"
        ? condition.every((inner) => matches(metadata, inner))
        : condition.some((inner) => matches(metadata, inner));
    }
    if (key.startsWith("$")) throw validation(`unknown operator ${key}`);
    const value = metadata[key];
    const isOperators =
      typeof condition === "object" &&
      condition !== null &&
      !Array.isArray(condition) &&
      Object.keys(condition).every((name) => name.startsWith("$"));
    if (!isOperators) return value === condition;
    return Object.entries(condition as Record<string, unknown>).every(([operator, operand]) =>
      compare(operator, value, operand),
    );
  });
}

function compare(operator: string, value: unknown, operand: unknown): boolean {
  const ordered = typeof value === "number" && typeof operand === "number";
  switch (operator) {
    case "$eq":
      return value === operand;
    case "$ne":
      return value !== operand;
    case "$gt":
      return ordered && (value as number) > (operand as number);
    case "$gte":
      return ordered && (value as number) >= (operand as number);
    case "$lt":
      return ordered && (value as number) < (operand as number);
    case "$lte":
      return ordered && (value as number) <= (operand as number);
    case "$in":
      return Array.isArray(operand) && operand.includes(value);
    case "$nin":
      return Array.isArray(operand) && !operand.includes(value);
    case "$exists":
      return (value !== undefined) === operand;
    default:
      throw validation(`unknown operator ${operator}`);
  }
}

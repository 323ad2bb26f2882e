import { createHash } from "node:crypto";
import {
  DeleteVectorsCommand,
  PutVectorsCommand,
  QueryVectorsCommand,
  type S3VectorsClient,
} from "@aws-sdk/client-s3vectors";
import type { VectorIndex } from "../../store/vector-index.ts";
import { checkEntry, checkId, checkQuery, checkScope } from "../../store/vector-rules.ts";
import { aws } from "./errors.ts";
import { s3VectorIndexName } from "./s3-vector-names.ts";

export interface S3VectorsIndexOptions {
  /** The vector bucket (infra/vectors.ts). */
  bucketName: string;
  /** Dimensions the bucket has an index for (named by s3VectorIndexName). */
  dimensions: readonly number[];
}

/** Nearest vectors asked for per query: past expired ones, the nearest live one is still among them. */
const TOP_K = 10;

interface StoredMetadata {
  scope?: unknown;
  expiresAt?: unknown;
}

/**
 * The semantic cache's vector index on Amazon S3 Vectors: one index per dimension in one vector bucket, each
 * vector carrying its `scope` and `expiresAt` as filterable metadata. A query filters on the exact scope, so
 * another scope's vectors are never candidates; the key starts with a hash of the scope, so equal ids of two
 * scopes never overwrite each other. S3 Vectors has no expiry of its own: an expired vector met by a query is
 * skipped and deleted. Scores are cosine similarities (1 - the cosine distance the service answers).
 */
export class S3VectorsIndex implements VectorIndex {
  readonly #client: S3VectorsClient;
  readonly #bucketName: string;
  readonly #dimensions: ReadonlySet<number>;

  constructor(client: S3VectorsClient, options: S3VectorsIndexOptions) {
    this.#client = client;
    this.#bucketName = options.bucketName;
    this.#dimensions = new Set(options.dimensions);
  }

  async nearest(
    scope: string,
    vector: Float32Array,
    minScore: number,
  ): Promise<{ id: string; score: number } | undefined> {
    // No direction, or no index for this embedding model's dimension: nothing can match.
    if (checkQuery(scope, vector, minScore) === 0 || !this.#dimensions.has(vector.length)) return undefined;
    const indexName = s3VectorIndexName(vector.length);
    const answer = await aws("s3vectors.QueryVectors", () =>
      this.#client.send(
        new QueryVectorsCommand({
          vectorBucketName: this.#bucketName,
          indexName,
          topK: TOP_K,
          queryVector: { float32: Array.from(vector) },
          filter: { scope: { $eq: scope } },
          returnMetadata: true,
          returnDistance: true,
        }),
      ),
    );
    const now = Date.now();
    const prefix = keyPrefix(scope);
    const expired: string[] = [];
    let hit: { id: string; score: number } | undefined;
    // Nearest first, as the service answers.
    for (const found of answer.vectors ?? []) {
      const metadata = (found.metadata ?? {}) as StoredMetadata;
      // The filter already holds; checked again so a vector of another scope can never answer.
      if (metadata.scope !== scope || !found.key?.startsWith(prefix) || found.distance === undefined) continue;
      if (typeof metadata.expiresAt !== "number" || metadata.expiresAt <= now) {
        expired.push(found.key);
        continue;
      }
      hit ??= { id: found.key.slice(prefix.length), score: 1 - found.distance };
    }
    if (expired.length > 0) await this.#deleteExpired(indexName, expired);
    return hit && hit.score >= minScore ? hit : undefined;
  }

  async add(scope: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    checkEntry(scope, id, vector, expiresAt);
    if (!this.#dimensions.has(vector.length))
      throw new RangeError(
        `no S3 Vectors index for ${vector.length}-dimension embeddings (indexes: ${[...this.#dimensions].join(", ")}; add the dimension in infra/)`,
      );
    await aws("s3vectors.PutVectors", () =>
      this.#client.send(
        new PutVectorsCommand({
          vectorBucketName: this.#bucketName,
          indexName: s3VectorIndexName(vector.length),
          vectors: [
            {
              key: keyPrefix(scope) + id,
              data: { float32: Array.from(vector) },
              metadata: { scope, expiresAt: Math.floor(expiresAt) },
            },
          ],
        }),
      ),
    );
  }

  /** The entry's dimension is not known here: its key is deleted from every index (absent keys are no error). */
  async remove(scope: string, id: string): Promise<void> {
    checkScope(scope);
    checkId(id);
    const key = keyPrefix(scope) + id;
    await Promise.all(
      [...this.#dimensions].map((dimension) =>
        aws("s3vectors.DeleteVectors", () =>
          this.#client.send(
            new DeleteVectorsCommand({
              vectorBucketName: this.#bucketName,
              indexName: s3VectorIndexName(dimension),
              keys: [key],
            }),
          ),
        ),
      ),
    );
  }

  /** Best effort: the query's answer stands either way, and a vector left behind is deleted when met again. */
  async #deleteExpired(indexName: string, keys: string[]): Promise<void> {
    try {
      await this.#client.send(new DeleteVectorsCommand({ vectorBucketName: this.#bucketName, indexName, keys }));
    } catch {
      // Deliberately ignored (see above).
    }
  }
}

/** A fixed-length hash of the scope, then `/`: keys of different scopes can never coincide. */
function keyPrefix(scope: string): string {
  return `${createHash("sha256").update(scope).digest("base64url")}/`;
}

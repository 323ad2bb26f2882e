/**
 * The vector index behind the semantic cache (core/inference/cache): stores one embedding per cache entry and finds the
 * nearest one for a request. Adapters: core/platform/local/sqlite-vector-index.ts (SQLite + an in-memory HNSW
 * index) and core/platform/aws/s3-vectors-index.ts (Amazon S3 Vectors). Both pass
 * test/contract/vector-index.contract.ts.
 *
 * `scope` is opaque to the index (the cache hashes organisation, workspace, namespace and everything of the
 * request but the last user message(s) into it): every entry lives in exactly one scope and no query ever
 * sees another scope's entries. Entries of one scope are matched only against query vectors of the same
 * dimension: a query in another dimension (another embedding model) is a miss, never an error.
 * Invalid arguments (see vector-rules.ts) throw RangeError.
 */
export interface VectorIndex {
  /** The nearest live entry in `scope` with cosine similarity >= minScore, or undefined. */
  nearest(scope: string, vector: Float32Array, minScore: number): Promise<{ id: string; score: number } | undefined>;
  /** Stores (or replaces) an entry; it expires at `expiresAt` (epoch ms). */
  add(scope: string, id: string, vector: Float32Array, expiresAt: number): Promise<void>;
  remove(scope: string, id: string): Promise<void>;
}

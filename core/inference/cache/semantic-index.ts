/**
 * The seam between the semantic cache (core/inference/cache) and the vector index that backs it (core/store:
 * a local index and Amazon S3 Vectors). The cache never sees how vectors are stored; an index never sees
 * requests or answers.
 *
 * `scope` is an opaque string (a SHA-256 hex digest) of everything a semantic hit must match exactly: the
 * organisation, the workspace, the namespace, the target, and the request without its last user message(s).
 * An index must never return an id added under another scope; it may keep one collection per scope or filter
 * by scope, as long as `nearest` stays fast with 100,000 entries in a workspace.
 */
export interface SemanticCacheIndex {
  /**
   * The entry of `scope` whose vector is most similar (cosine similarity) to `vector`, when that similarity is
   * at least `minScore` (0..1) and the entry has not expired; else undefined.
   */
  nearest(scope: string, vector: Float32Array, minScore: number): Promise<{ id: string; score: number } | undefined>;
  /** Adds (or replaces) the vector of entry `id` under `scope`, live until `expiresAt` (Unix ms). */
  add(scope: string, id: string, vector: Float32Array, expiresAt: number): Promise<void>;
  /** Forgets entry `id` of `scope` (absent: nothing to do). */
  remove(scope: string, id: string): Promise<void>;
}

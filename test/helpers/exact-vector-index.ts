import type { SemanticCacheIndex } from "../../core/cache/semantic-index.ts";

/**
 * A test double of the semantic cache's vector index: exact cosine similarity over every vector of a scope.
 * For tests only; the gateway's indexes live in core/cache/vectors.
 */
export class ExactVectorIndex implements SemanticCacheIndex {
  readonly scopes = new Map<string, Map<string, { vector: Float32Array; expiresAt: number }>>();

  async nearest(scope: string, vector: Float32Array, minScore: number) {
    let best: { id: string; score: number } | undefined;
    for (const [id, entry] of this.scopes.get(scope) ?? []) {
      if (entry.expiresAt <= Date.now()) continue;
      const score = cosine(vector, entry.vector);
      if (score >= minScore && (!best || score > best.score)) best = { id, score };
    }
    return best;
  }

  async add(scope: string, id: string, vector: Float32Array, expiresAt: number) {
    const entries = this.scopes.get(scope) ?? new Map();
    this.scopes.set(scope, entries);
    entries.set(id, { vector, expiresAt });
  }

  async remove(scope: string, id: string) {
    this.scopes.get(scope)?.delete(id);
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  return normA && normB ? dot / Math.sqrt(normA * normB) : 0;
}

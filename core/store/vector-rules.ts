/**
 * The argument rules every VectorIndex adapter enforces, and the cosine similarity they score with, so both
 * platforms accept, reject and score exactly alike.
 */

/** Longest scope and id, in characters: both go into the S3 Vectors key and filterable metadata (2 KB cap). */
export const MAX_SCOPE_LENGTH = 256;
export const MAX_ID_LENGTH = 256;
/** S3 Vectors' largest dimension; far above any embedding model in use. */
export const MAX_DIMENSION = 4096;

export function checkScope(scope: string): void {
  if (typeof scope !== "string" || scope.length === 0 || scope.length > MAX_SCOPE_LENGTH)
    throw new RangeError(`vector scope must be a string of 1 to ${MAX_SCOPE_LENGTH} characters`);
}

export function checkId(id: string): void {
  if (typeof id !== "string" || id.length === 0 || id.length > MAX_ID_LENGTH)
    throw new RangeError(`vector id must be a string of 1 to ${MAX_ID_LENGTH} characters`);
}

/** The vector's Euclidean norm; throws unless it is a Float32Array of finite values of a supported length. */
export function checkVector(vector: Float32Array): number {
  if (!(vector instanceof Float32Array) || vector.length === 0 || vector.length > MAX_DIMENSION)
    throw new RangeError(`vector must be a Float32Array of 1 to ${MAX_DIMENSION} values`);
  let sum = 0;
  for (const value of vector) sum += value * value;
  // A NaN or infinite component makes the sum non-finite.
  if (!Number.isFinite(sum)) throw new RangeError("vector values must be finite numbers");
  return Math.sqrt(sum);
}

/** Checks a vector to store: one with no direction (all zeros) has no cosine similarity to anything. */
export function checkStoredVector(vector: Float32Array): void {
  if (checkVector(vector) === 0) throw new RangeError("vector must not be all zeros");
}

export function checkExpiresAt(expiresAt: number): void {
  if (!Number.isFinite(expiresAt)) throw new RangeError("expiresAt must be a finite epoch time in milliseconds");
}

export function checkMinScore(minScore: number): void {
  if (typeof minScore !== "number" || !(minScore >= -1 && minScore <= 1))
    throw new RangeError("minScore must be a cosine similarity from -1 to 1");
}

/** Checks what VectorIndex.add is given (every family checks the same, before any I/O). */
export function checkEntry(scope: string, id: string, vector: Float32Array, expiresAt: number): void {
  checkScope(scope);
  checkId(id);
  checkStoredVector(vector);
  checkExpiresAt(expiresAt);
}

/** Checks what VectorIndex.nearest is given: the vector's norm (0: a vector with no direction matches nothing). */
export function checkQuery(scope: string, vector: Float32Array, minScore: number): number {
  checkScope(scope);
  checkMinScore(minScore);
  return checkVector(vector);
}

/** Cosine similarity of two vectors of the same length (0 when either has no direction). */
export function cosineSimilarity(a: Float32Array, b: Float32Array): number {
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    normA += a[i]! * a[i]!;
    normB += b[i]! * b[i]!;
  }
  if (normA === 0 || normB === 0) return 0;
  // Rounding can take the ratio a hair past 1 for identical vectors.
  return Math.max(-1, Math.min(1, dot / Math.sqrt(normA * normB)));
}

/**
 * Names shared by infra/vectors.ts (which creates the S3 Vectors indexes) and the adapter (which addresses
 * them): one index per embedding dimension, since an S3 Vectors index has a fixed dimension.
 */

/** Dimensions the deployment gets an index for: common embedding models (MiniLM 384; bge/nomic/Gemini 768;
 * Cohere v3, Titan v2 1024; OpenAI text-embedding-3-small / ada-002 1536; text-embedding-3-large 3072). */
export const SEMANTIC_CACHE_DIMENSIONS = [384, 768, 1024, 1536, 3072] as const;

/** The index of one dimension in the vector bucket. */
export const s3VectorIndexName = (dimension: number) => `cache-${dimension}`;

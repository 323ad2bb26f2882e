import { SEMANTIC_CACHE_DIMENSIONS, s3VectorIndexName } from "../core/platform/aws/s3-vector-names.ts";
import { componentName, vectorBucketName } from "./naming.ts";

/**
 * The semantic cache's vectors on Amazon S3 Vectors (core/platform/aws/s3-vectors-index.ts): one vector bucket
 * and, since an index has a fixed dimension, one cosine index per embedding dimension in
 * SEMANTIC_CACHE_DIMENSIONS (an empty index costs nothing; add a dimension there for another embedding model).
 * Every vector's `scope` and `expiresAt` are filterable metadata (the default for metadata keys). SST has no
 * component for S3 Vectors, so these are the Pulumi AWS provider's resources; functions get IAM permissions on
 * the indexes (VECTOR_PERMISSIONS) instead of a link.
 */

export const vectorBucket = new aws.s3.VectorsVectorBucket("SemanticCacheVectors", {
  vectorBucketName: vectorBucketName($app.name, $app.stage),
  // Stages removed with `sst remove` take their cached vectors with them; production keeps the bucket.
  forceDestroy: $app.removal === "remove",
});

export const vectorIndexes = SEMANTIC_CACHE_DIMENSIONS.map(
  (dimension) =>
    new aws.s3.VectorsIndex(componentName("semantic cache index", String(dimension)), {
      vectorBucketName: vectorBucket.vectorBucketName,
      indexName: s3VectorIndexName(dimension),
      dataType: "float32",
      dimension,
      distanceMetric: "cosine",
    }),
);

/**
 * What the adapter calls. QueryVectors with a metadata filter and returnMetadata also needs GetVectors (AWS's
 * rule for filtered queries); nothing may create or delete indexes.
 */
export const VECTOR_ACTIONS = [
  "s3vectors:PutVectors",
  "s3vectors:QueryVectors",
  "s3vectors:GetVectors",
  "s3vectors:DeleteVectors",
];

export const VECTOR_PERMISSIONS = [
  { actions: VECTOR_ACTIONS, resources: vectorIndexes.map((index) => index.indexArn) },
];

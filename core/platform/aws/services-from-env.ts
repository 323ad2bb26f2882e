import { loadSettings } from "../../config/settings.ts";
import type { Services } from "../../services.ts";
import { createServices } from "../services.ts";
import { createAwsStores } from "./aws-stores.ts";

/**
 * The services of a Lambda container, from the environment infra/ gives every function: GATEWAY_TABLE,
 * GATEWAY_BUCKET, GATEWAY_QUEUE_URLS (JSON: logical queue name, DLQs included -> URL) and
 * GATEWAY_MASTER_KEY or GATEWAY_KMS_KEY_ID, and for the semantic cache GATEWAY_VECTOR_BUCKET and
 * GATEWAY_VECTOR_DIMENSIONS (the dimensions it has an S3 Vectors index for). Region, credentials (and endpoints, through the SDK's own
 * AWS_ENDPOINT_URL_* variables) come from the Lambda runtime as usual. Analytics count request logs from the
 * table's stream (core/platform/aws/analytics-stream-handler.ts), not as they are written; feedback is still
 * counted where it is given.
 */
export function servicesFromEnv(env: Record<string, string | undefined> = process.env): Services {
  const settings = loadSettings(env);
  const stores = createAwsStores({
    tableName: required("GATEWAY_TABLE", settings.GATEWAY_TABLE),
    bucketName: required("GATEWAY_BUCKET", settings.GATEWAY_BUCKET),
    queueUrls: parseQueueUrls(required("GATEWAY_QUEUE_URLS", settings.GATEWAY_QUEUE_URLS)),
    masterKey: settings.GATEWAY_MASTER_KEY,
    kmsKeyId: settings.GATEWAY_KMS_KEY_ID,
    vectorBucketName: settings.GATEWAY_VECTOR_BUCKET,
    vectorDimensions: parseDimensions(settings.GATEWAY_VECTOR_DIMENSIONS),
    secretRefs: {
      prefix: settings.GATEWAY_SECRET_REF_PREFIX,
      cacheMs: settings.GATEWAY_SECRET_REF_CACHE_SECONDS * 1000,
    },
  });
  const services = createServices(settings, stores);
  // Request logs reach analytics through the table's DynamoDB stream (the analytics stream worker, one
  // write per distinct counter per batch), so the request path writes only the log record (and any limits).
  services.analytics.countLogsFromStream();
  return services;
}

function required(name: string, value: string | undefined): string {
  if (!value) throw new Error(`${name} is not set: the AWS platform needs it (infra/ sets it on every function)`);
  return value;
}

function parseQueueUrls(value: string): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new Error("GATEWAY_QUEUE_URLS is not JSON");
  }
  const valid =
    typeof parsed === "object" &&
    parsed !== null &&
    !Array.isArray(parsed) &&
    Object.values(parsed).every((url) => typeof url === "string");
  if (!valid) throw new Error("GATEWAY_QUEUE_URLS must be a JSON object of queue name -> queue URL");
  return parsed as Record<string, string>;
}

function parseDimensions(values: string[]): number[] {
  return values.map((value) => {
    const dimension = Number(value);
    if (!Number.isInteger(dimension) || dimension < 1 || dimension > 4096)
      throw new Error(`GATEWAY_VECTOR_DIMENSIONS: expected a comma-separated list of integers 1..4096, got '${value}'`);
    return dimension;
  });
}

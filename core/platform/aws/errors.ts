import { StoreUnavailableError } from "../../store/ports.ts";

/**
 * Error names AWS gives throttling and capacity faults, which are worth retrying later: the SDK clients' error
 * names and DynamoDB's `__type` (dynamo-http.ts) are the same names.
 */
const RETRYABLE_NAMES = new Set([
  "ThrottlingException",
  "Throttling",
  "ThrottledException",
  "RequestThrottled",
  "RequestThrottledException",
  "TooManyRequestsException",
  "ProvisionedThroughputExceededException",
  "RequestLimitExceeded",
  "SlowDown",
  "LimitExceededException",
  "InternalServerError",
  "ServiceUnavailable",
  "TimeoutError",
  "RequestTimeout",
  "RequestTimeoutException",
  "KMSInternalException",
]);

/** Socket-level failures: the service could not be reached at all. */
export const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
]);

/** What an SDK service exception or a DynamoServiceError carries. */
interface SdkError {
  name?: string;
  code?: string;
  $fault?: "client" | "server";
  $metadata?: { httpStatusCode?: number };
  cause?: unknown;
}

/** True for faults of the service or the network (answered as 503), false for errors in the request. */
export function isUnavailable(error: unknown, depth = 0): boolean {
  const e = error as SdkError | undefined;
  if (!e || typeof e !== "object" || depth > 3) return false;
  if (e.$fault === "server" || (e.$metadata?.httpStatusCode ?? 0) >= 500) return true;
  if (e.name && RETRYABLE_NAMES.has(e.name)) return true;
  if (e.code && NETWORK_CODES.has(e.code)) return true;
  // Aggregated connection errors (IPv4 + IPv6 attempts) keep the socket error in `errors` or `cause`.
  const nested = (e as { errors?: unknown[] }).errors;
  if (Array.isArray(nested) && nested.some((inner) => isUnavailable(inner, depth + 1))) return true;
  return e.cause !== undefined && isUnavailable(e.cause, depth + 1);
}

/** Runs an AWS call, turning service and network faults into StoreUnavailableError. */
export async function aws<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isUnavailable(error)) throw new StoreUnavailableError(`${what}: ${(error as Error).name}`, { cause: error });
    throw error;
  }
}

/** DynamoDB's name for a failed ConditionExpression on its single-item writes. */
export const isConditionFailed = (error: unknown) =>
  (error as SdkError | undefined)?.name === "ConditionalCheckFailedException";

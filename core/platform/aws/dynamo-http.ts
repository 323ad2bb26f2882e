import { isUnavailable } from "./errors.ts";
import { post } from "./http-post.ts";
import { type SigningCredentials, type SigningScope, signRequest } from "./sigv4.ts";

/**
 * DynamoDB's JSON protocol over HTTPS, SigV4-signed: one POST per operation with `X-Amz-Target:
 * DynamoDB_20120810.<Operation>`. This replaces the SDK client on the request path, whose protocol, middleware
 * and endpoint machinery weigh on every cold start (bench/README.md) for the six operations we use.
 */

export interface DynamoHttpOptions {
  /** Defaults to AWS_REGION (then AWS_DEFAULT_REGION, then us-east-1). */
  region?: string;
  /** Defaults to AWS_ENDPOINT_URL_DYNAMODB, then AWS_ENDPOINT_URL, then the regional endpoint. */
  endpoint?: string;
  /** Defaults to the Lambda runtime's AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN. */
  credentials?: SigningCredentials;
  /** Attempts per call, as the SDK's standard retry mode counts them (default 3). */
  maxAttempts?: number;
  /** Per attempt; DynamoDB answers in milliseconds, so a stalled connection is retried instead of awaited. */
  attemptTimeoutMs?: number;
  env?: Record<string, string | undefined>;
}

/** An error DynamoDB answered, shaped like the SDK's service exceptions so errors.ts reads both alike. */
export class DynamoServiceError extends Error {
  readonly $fault: "client" | "server";
  readonly $metadata: { httpStatusCode: number };

  constructor(name: string, message: string, status: number) {
    super(message);
    this.name = name;
    this.$fault = status >= 500 ? "server" : "client";
    this.$metadata = { httpStatusCode: status };
  }
}

const TARGET_PREFIX = "DynamoDB_20120810.";
const RETRY_BASE_MS = 100;
const RETRY_CAP_MS = 20_000;

export class DynamoHttp {
  readonly #url: URL;
  readonly #scope: SigningScope;
  readonly #credentials: () => SigningCredentials;
  readonly #maxAttempts: number;
  readonly #attemptTimeoutMs: number;

  constructor(options: DynamoHttpOptions = {}) {
    const env = options.env ?? process.env;
    const region = options.region ?? env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? "us-east-1";
    this.#url = new URL(
      options.endpoint ?? env.AWS_ENDPOINT_URL_DYNAMODB ?? env.AWS_ENDPOINT_URL ?? regionalEndpoint(region),
    );
    this.#scope = { region, service: "dynamodb" };
    // Read when a request is signed, so a function that never touches DynamoDB needs no credentials.
    this.#credentials = () => options.credentials ?? credentialsFromEnv(env);
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 3);
    this.#attemptTimeoutMs = options.attemptTimeoutMs ?? 5_000;
  }

  /** Calls one operation with a wire-format (attribute-value) body; retries throttling, 5xx and network faults. */
  async call<T = Record<string, unknown>>(operation: string, body: object): Promise<T> {
    const payload = JSON.stringify(body);
    for (let attempt = 1; ; attempt++) {
      try {
        return (await this.#attempt(operation, payload)) as T;
      } catch (error) {
        if (attempt >= this.#maxAttempts || !isUnavailable(error)) throw error;
        // Full jitter on an exponential base, as the SDK's standard retry mode does.
        const delay = Math.random() * Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }

  async #attempt(operation: string, payload: string): Promise<unknown> {
    const headers = signRequest(
      {
        method: "POST",
        url: this.#url,
        headers: { "content-type": "application/x-amz-json-1.0", "x-amz-target": TARGET_PREFIX + operation },
        body: payload,
      },
      this.#scope,
      this.#credentials(),
    );
    const { status, text } = await post(this.#url, headers, payload, this.#attemptTimeoutMs);
    if (status >= 200 && status < 300) return text ? JSON.parse(text) : {};
    throw serviceError(status, text);
  }
}

/** DynamoDB's error body: `{"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException","message":"..."}`. */
function serviceError(status: number, text: string): DynamoServiceError {
  let parsed: { __type?: string; message?: string; Message?: string } = {};
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON (a proxy's error page): the status alone decides.
  }
  const type = parsed.__type?.split("#").pop() || (status >= 500 ? "InternalServerError" : `HttpError${status}`);
  return new DynamoServiceError(type, parsed.message ?? parsed.Message ?? `DynamoDB answered ${status}`, status);
}

function regionalEndpoint(region: string): string {
  return `https://dynamodb.${region}.${region.startsWith("cn-") ? "amazonaws.com.cn" : "amazonaws.com"}`;
}

/** The Lambda runtime puts the function role's credentials in the environment. */
export function credentialsFromEnv(env: Record<string, string | undefined>): SigningCredentials {
  const accessKeyId = env.AWS_ACCESS_KEY_ID;
  const secretAccessKey = env.AWS_SECRET_ACCESS_KEY;
  if (!accessKeyId || !secretAccessKey) {
    throw new Error("DynamoDB needs AWS credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set");
  }
  return { accessKeyId, secretAccessKey, sessionToken: env.AWS_SESSION_TOKEN || undefined };
}

import { type EmulatorEndpoints, TEST_CREDENTIALS, TEST_REGION } from "../setup/emulators.ts";

/** The environments the shape gives its functions and its container, besides what infra/ gives them. */

/** Where every AWS service the shape does not emulate (KMS, Secrets Manager, SSM, STS) is sent: nowhere. */
const UNREACHABLE = "http://127.0.0.1:9";

/** What the Lambda runtime sets in every function's environment (besides the function's own variables). */
export function lambdaRuntimeEnvironment(name: string, memoryMb: number): Record<string, string> {
  return {
    AWS_REGION: TEST_REGION,
    AWS_DEFAULT_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(memoryMb),
    AWS_LAMBDA_FUNCTION_VERSION: "$LATEST",
    AWS_EXECUTION_ENV: "AWS_Lambda_nodejs24.x",
    LAMBDA_TASK_ROOT: "/var/task",
    TZ: ":UTC",
  };
}

/** What the container gets from its task role and ECS: a region and credentials. */
export function containerEnvironment(): Record<string, string> {
  return {
    AWS_REGION: TEST_REGION,
    AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
  };
}

/** The emulators in place of DynamoDB, S3, SQS and S3 Vectors; every other AWS endpoint goes nowhere. */
export function emulatorEndpoints(emulators: EmulatorEndpoints, s3vectors: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: UNREACHABLE,
    AWS_ENDPOINT_URL_DYNAMODB: emulators.dynamodb,
    AWS_ENDPOINT_URL_S3: emulators.fauxqs,
    AWS_ENDPOINT_URL_SQS: emulators.fauxqs,
    AWS_ENDPOINT_URL_S3VECTORS: s3vectors,
  };
}

import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, startMockServer } from "../helpers/mock-server.ts";

/**
 * A mock of AWS Secrets Manager and SSM Parameter Store over real HTTP, in the AWS JSON 1.1 protocol both
 * SDK clients speak (Secrets Manager API reference "GetSecretValue", SSM API reference "GetParameter"):
 * `POST /` with `Content-Type: application/x-amz-json-1.1` and `X-Amz-Target: secretsmanager.GetSecretValue`
 * or `AmazonSSM.GetParameter`, a JSON body, answered 200 with JSON; errors are 400 with
 * `{"__type": "<ErrorName>", "message": "..."}`. Requests must be SigV4-signed (an `Authorization` header).
 * Secrets are found by name or ARN; parameters by name.
 */
export interface AwsSecretsMock extends MockServer {
  /** name -> SecretString */
  secrets: Map<string, string>;
  /** name -> Value */
  parameters: Map<string, string>;
  /** How many GetSecretValue / GetParameter calls arrived (cache tests). */
  calls(): number;
}

const REGION = "us-east-1";
const ACCOUNT = "123456789012";
const secretArn = (name: string) => `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}-AbCdEf`;

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
  response.end(JSON.stringify(body));
}

const fail = (response: ServerResponse, type: string, message: string) =>
  send(response, 400, { __type: type, message });

export async function startAwsSecretsMock(): Promise<AwsSecretsMock> {
  const secrets = new Map<string, string>();
  const parameters = new Map<string, string>();
  let calls = 0;
  const route = (request: RecordedRequest, response: ServerResponse) => {
    const target = String(request.headers["x-amz-target"] ?? "");
    if (request.method !== "POST" || !String(request.headers["content-type"]).startsWith("application/x-amz-json-1.1"))
      return fail(response, "UnknownOperationException", "expected POST with application/x-amz-json-1.1");
    if (!String(request.headers.authorization ?? "").startsWith("AWS4-HMAC-SHA256 "))
      return fail(response, "MissingAuthenticationTokenException", "Request is missing Authentication Token");
    const body = request.json() as Record<string, unknown>;
    calls++;
    if (target === "secretsmanager.GetSecretValue") {
      const id = String(body.SecretId ?? "");
      const name = [...secrets.keys()].find((candidate) => candidate === id || secretArn(candidate) === id);
      if (!name) return fail(response, "ResourceNotFoundException", "Secrets Manager can't find the specified secret.");
      return send(response, 200, {
        ARN: secretArn(name),
        Name: name,
        SecretString: secrets.get(name),
        VersionId: "00000000-0000-0000-0000-000000000001",
        VersionStages: ["AWSCURRENT"],
        CreatedDate: 1_700_000_000,
      });
    }
    if (target === "AmazonSSM.GetParameter") {
      const name = String(body.Name ?? "");
      const value = parameters.get(name);
      if (value === undefined) return fail(response, "ParameterNotFound", "");
      return send(response, 200, {
        Parameter: {
          Name: name,
          Type: body.WithDecryption === true ? "SecureString" : "String",
          // Without decryption a SecureString parameter's value is ciphertext.
          Value: body.WithDecryption === true ? value : "AQICAHencrypted==",
          Version: 1,
          ARN: `arn:aws:ssm:${REGION}:${ACCOUNT}:parameter/${name.replace(/^\//, "")}`,
          DataType: "text",
          LastModifiedDate: 1_700_000_000,
        },
      });
    }
    return fail(response, "UnknownOperationException", `unknown target ${target}`);
  };
  const server = await startMockServer(route);
  return { ...server, secrets, parameters, calls: () => calls };
}

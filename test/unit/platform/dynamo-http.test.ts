import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DynamoHttp, DynamoServiceError } from "../../../core/platform/aws/dynamo-http.ts";
import { aws, isConditionFailed } from "../../../core/platform/aws/errors.ts";
import { StoreUnavailableError } from "../../../core/store/ports.ts";

/** A stand-in DynamoDB endpoint answering from a script of replies, recording each request. */
type Reply = { status: number; body?: unknown } | "hang";
let replies: Reply[] = [];
const received: Array<{ headers: IncomingMessage["headers"]; body: string }> = [];
let server: Server;
let endpoint: string;

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({ headers: request.headers, body });
      const reply = replies.shift() ?? { status: 200, body: {} };
      if (reply === "hang") return;
      response.writeHead(reply.status, { "content-type": "application/x-amz-json-1.0" });
      response.end(typeof reply.body === "string" ? reply.body : JSON.stringify(reply.body ?? {}));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  replies = [];
  received.length = 0;
});

const client = (options: { maxAttempts?: number; attemptTimeoutMs?: number } = {}) =>
  new DynamoHttp({
    endpoint,
    region: "eu-west-1",
    credentials: { accessKeyId: "AKID", secretAccessKey: "secret", sessionToken: "token" },
    ...options,
  });

const error = (type: string, message = "no") => ({ __type: `com.amazonaws.dynamodb.v20120810#${type}`, message });

describe("DynamoHttp", () => {
  it("posts the operation as signed JSON and returns the parsed answer", async () => {
    replies = [{ status: 200, body: { Item: { pk: { S: "p" } } } }];
    const out = await client().call("GetItem", { TableName: "t", Key: { pk: { S: "p" } } });
    expect(out).toEqual({ Item: { pk: { S: "p" } } });
    const [request] = received;
    expect(JSON.parse(request!.body)).toEqual({ TableName: "t", Key: { pk: { S: "p" } } });
    expect(request!.headers["x-amz-target"]).toBe("DynamoDB_20120810.GetItem");
    expect(request!.headers["content-type"]).toBe("application/x-amz-json-1.0");
    expect(request!.headers["content-length"]).toBe(String(Buffer.byteLength(request!.body)));
    expect(request!.headers["x-amz-security-token"]).toBe("token");
    expect(request!.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKID\/\d{8}\/eu-west-1\/dynamodb\//);
  });

  it("retries throttling and 5xx answers, then succeeds", async () => {
    replies = [
      { status: 400, body: error("ProvisionedThroughputExceededException") },
      { status: 500, body: error("InternalServerError") },
      { status: 200, body: { Attributes: { value: { N: "3" } } } },
    ];
    expect(await client().call("UpdateItem", {})).toEqual({ Attributes: { value: { N: "3" } } });
    expect(received).toHaveLength(3);
  });

  it("gives up after maxAttempts with an error the store layer answers 503", async () => {
    replies = [
      { status: 503, body: "<html>busy</html>" },
      { status: 503, body: "<html>busy</html>" },
    ];
    const failure = aws("records.get", () => client({ maxAttempts: 2 }).call("GetItem", {}));
    await expect(failure).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(received).toHaveLength(2);
  });

  it("does not retry client errors and names them as DynamoDB does", async () => {
    replies = [{ status: 400, body: error("ConditionalCheckFailedException", "The conditional request failed") }];
    const failure = await client()
      .call("PutItem", {})
      .catch((caught: unknown) => caught);
    expect(failure).toBeInstanceOf(DynamoServiceError);
    expect(failure).toMatchObject({ name: "ConditionalCheckFailedException", $fault: "client" });
    expect(isConditionFailed(failure)).toBe(true);
    expect(received).toHaveLength(1);
    replies = [{ status: 400, body: error("ValidationException") }];
    await expect(aws("records.put", () => client().call("PutItem", {}))).rejects.toMatchObject({
      name: "ValidationException",
    });
  });

  it("abandons an attempt that gets no answer and retries it", async () => {
    replies = ["hang", { status: 200, body: { ok: true } }];
    expect(await client({ attemptTimeoutMs: 100 }).call("GetItem", {})).toEqual({ ok: true });
    replies = ["hang"];
    const failure = aws("records.get", () => client({ attemptTimeoutMs: 100, maxAttempts: 1 }).call("GetItem", {}));
    await expect(failure).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("reads the endpoint, region and credentials from the environment", async () => {
    const fromEnv = new DynamoHttp({
      env: {
        AWS_ENDPOINT_URL_DYNAMODB: endpoint,
        AWS_REGION: "ap-south-1",
        AWS_ACCESS_KEY_ID: "ENVKEY",
        AWS_SECRET_ACCESS_KEY: "s",
      },
    });
    await fromEnv.call("GetItem", {});
    expect(received[0]!.headers.authorization).toContain("Credential=ENVKEY/");
    expect(received[0]!.headers.authorization).toContain("/ap-south-1/dynamodb/");
    await expect(new DynamoHttp({ env: { AWS_ENDPOINT_URL: endpoint } }).call("GetItem", {})).rejects.toThrow(
      /AWS_ACCESS_KEY_ID/,
    );
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, apiCaller, startTestGateway } from "../helpers/gateway.ts";
import { type BedrockMock, startBedrockMock } from "../mocks/bedrock.ts";

/**
 * Per-request session tags for Bedrock (spec 5.2) at the gateway's edge: `x-gateway-aws-session-tags` (and its
 * `x-portkey-` alias) is validated (400 naming the header), `x-gateway-aws-auth-type` too, and a Bedrock call
 * signed with the target's own keys is unchanged by tags (they only go to STS when a role is assumed; the STS
 * exchange itself: test/unit/providers/bedrock-assume-role.test.ts).
 */

let gateway: TestGateway;
let bedrock: BedrockMock;
const api = apiCaller(() => gateway);
const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const MODEL = "anthropic.claude-3-5-sonnet-20240620-v1:0";

beforeAll(async () => {
  bedrock = await startBedrockMock({ credentials });
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await bedrock?.close();
});

const chat = (headers: Record<string, string>) =>
  fetch(`${gateway.url}/v1/chat/completions`, {
    method: "POST",
    headers: {
      "x-gateway-api-key": gateway.adminKey,
      "content-type": "application/json",
      "x-gateway-provider": "bedrock",
      "x-gateway-custom-host": bedrock.url,
      "x-gateway-aws-access-key-id": credentials.accessKeyId,
      "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
      "x-gateway-aws-region": "us-east-1",
      ...headers,
    },
    body: JSON.stringify({ model: MODEL, messages: [{ role: "user", content: "Hi" }] }),
  });

describe("Bedrock session tags", () => {
  it("refuses malformed tags and auth types with 400 naming the header", async () => {
    for (const [name, value] of [
      ["x-gateway-aws-session-tags", "team=search"],
      ["x-portkey-aws-session-tags", '{"team":1}'],
      ["x-gateway-aws-auth-type", "magic"],
    ] as const) {
      const response = await chat({ [name]: value });
      expect(response.status, name).toBe(400);
      const body = await response.json();
      expect(body.error.param).toBe(name.replace("x-portkey-", "x-gateway-"));
    }
    expect(bedrock.requests).toHaveLength(0);
  });

  it("answers 400 for assumedRole without a valid role ARN, before calling anyone", async () => {
    const response = await chat({ "x-gateway-aws-auth-type": "assumedRole", "x-gateway-aws-role-arn": "nope" });
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({ param: "aws_role_arn", code: "invalid_role_arn" });
    expect(bedrock.requests).toHaveLength(0);
  });

  it("leaves calls signed with the target's own keys as they were, and logs them", async () => {
    const traceId = `session-tags-${Date.now()}`;
    const response = await chat({ "x-gateway-aws-session-tags": '{"team":"search"}', "x-gateway-trace-id": traceId });
    expect(response.status).toBe(200);
    expect(bedrock.requests.at(-1)!.headers.authorization).toContain(`Credential=${credentials.accessKeyId}/`);
    // This request's own log (earlier tests' refused requests are logged too).
    const logs = async () => (await api("GET", `/v1/logs?trace_id=${traceId}`)).body.data;
    await expect.poll(async () => (await logs()).length, { timeout: 5000 }).toBeGreaterThan(0);
    const [log] = await logs();
    expect(log).toMatchObject({ status: 200 });
    expect(log.usage.totalTokens).toBeGreaterThan(0);
    expect(JSON.stringify(log)).not.toContain(credentials.secretAccessKey);
  });
});

import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import { type MockServer, startMockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { type AnthropicBatchesMock, startAnthropicBatchesMock } from "../mocks/anthropic-batches.ts";
import { startAzureMock } from "../mocks/azure.ts";
import { type BedrockMock, checkSigV4, startBedrockMock } from "../mocks/bedrock.ts";
import { type CohereMock, startCohereMock } from "../mocks/cohere.ts";
import { startGoogleMock } from "../mocks/google.ts";
import type { OpenAIMock } from "../mocks/openai.ts";
import { type VertexMock, createTestServiceAccount, startVertexMock } from "../mocks/vertex.ts";

/**
 * Pass-through (spec 4.7) on the providers with their own formats: `/v1/{provider-endpoint}` and `/v1/proxy/...`
 * reach each provider's own API (the mocks of test/mocks follow each provider's documented API) with its auth, the
 * body unchanged on the way up and the answer's status, content type and bytes unchanged on the way down.
 * Every mock sits behind a tap that records the exact bytes it answered, to compare with what the client got.
 */

interface Tapped {
  url: string;
  answers: Array<{ status: number; contentType: string | undefined; body: Buffer }>;
  close(): Promise<void>;
}

/** A byte-for-byte relay in front of a mock (the Host header kept, so SigV4 still verifies), recording answers. */
async function tap(target: MockServer): Promise<Tapped> {
  const answers: Tapped["answers"] = [];
  const upstream = new URL(target.url);
  const server = await startMockServer(
    (recorded, res) =>
      new Promise<void>((resolve, reject) => {
        const forward = httpRequest(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: recorded.method,
            path: recorded.path,
            headers: recorded.headers,
          },
          (answer) => {
            const chunks: Buffer[] = [];
            res.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.on("data", (chunk: Buffer) => {
              chunks.push(chunk);
              res.write(chunk);
            });
            answer.on("end", () => {
              answers.push({
                status: answer.statusCode ?? 0,
                contentType: answer.headers["content-type"],
                body: Buffer.concat(chunks),
              });
              res.end();
              resolve();
            });
          },
        );
        forward.on("error", reject);
        forward.end(recorded.body);
      }),
  );
  return { url: server.url, answers, close: () => server.close() };
}

let gateway: TestGateway;
const mocks: Array<{ close(): Promise<void> }> = [];

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  for (const mock of mocks) await mock.close();
});

async function tapped<T extends MockServer>(started: Promise<T>): Promise<{ mock: T; tap: Tapped }> {
  const mock = await started;
  const relay = await tap(mock);
  mocks.push(mock, relay);
  return { mock, tap: relay };
}

async function call(
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; contentType: string | null; bytes: Buffer; headers: Headers }> {
  const response = await fetch(`${gateway.url}${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      "x-gateway-api-key": gateway.adminKey,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers,
    },
    body,
  });
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    bytes: Buffer.from(await response.arrayBuffer()),
    headers: response.headers,
  };
}

/** The client got exactly what the provider answered. */
function expectUnchanged(got: Awaited<ReturnType<typeof call>>, relay: Tapped, status = 200): void {
  const answered = relay.answers.at(-1)!;
  expect(got.status).toBe(status);
  expect(answered.status).toBe(status);
  expect(got.contentType).toBe(answered.contentType);
  expect(got.bytes.equals(answered.body)).toBe(true);
}

async function logsOf(provider: string): Promise<any[]> {
  const response = await fetch(`${gateway.url}/v1/logs?provider=${provider}&limit=50`, {
    headers: { "x-gateway-api-key": gateway.adminKey },
  });
  expect(response.status).toBe(200);
  return (await response.json()).data;
}

describe("anthropic", () => {
  let messages: { mock: AnthropicMock; tap: Tapped };
  let batches: { mock: AnthropicBatchesMock; tap: Tapped };
  const headersFor = (host: string) => ({
    "x-gateway-provider": "anthropic",
    "x-gateway-custom-host": host,
    authorization: "Bearer sk-ant-target",
  });

  beforeAll(async () => {
    messages = await tapped(startAnthropicMock());
    batches = await tapped(startAnthropicBatchesMock());
  });

  it("/v1/proxy/messages: JSON and SSE with x-api-key, anthropic-version and the client's anthropic-beta", async () => {
    const body = '{"model":"claude-sonnet-4-5",  "max_tokens":64,"messages":[{"role":"user","content":"Hi"}]}';
    const json = await call(
      "/v1/proxy/messages",
      { ...headersFor(messages.tap.url), "anthropic-beta": "tools-x" },
      body,
    );
    expectUnchanged(json, messages.tap);
    expect(JSON.parse(json.bytes.toString()).type).toBe("message");
    const sent = messages.mock.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("sk-ant-target");
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    expect(sent.headers["anthropic-beta"]).toBe("tools-x");
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.toString()).toBe(body);

    const streamBody = JSON.stringify({ ...JSON.parse(body), stream: true });
    const stream = await call("/v1/proxy/messages", headersFor(messages.tap.url), streamBody);
    expectUnchanged(stream, messages.tap);
    expect(stream.contentType).toContain("text/event-stream");
    expect(stream.bytes.toString()).toContain("event: message_stop");
    expect(messages.mock.requests.at(-1)!.body.toString()).toBe(streamBody);
  });

  it("/v1/messages/batches (no dedicated route) reaches Anthropic; the client's anthropic-version is kept", async () => {
    const body = JSON.stringify({
      requests: [
        {
          custom_id: "a-1",
          params: { model: "claude-sonnet-4-5", max_tokens: 16, messages: [{ role: "user", content: "x" }] },
        },
      ],
    });
    const created = await call(
      "/v1/messages/batches",
      { ...headersFor(batches.tap.url), "anthropic-version": "2023-06-01" },
      body,
    );
    expectUnchanged(created, batches.tap);
    expect(JSON.parse(created.bytes.toString())).toMatchObject({
      type: "message_batch",
      processing_status: "in_progress",
    });
    const sent = batches.mock.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages/batches");
    expect(sent.headers["anthropic-version"]).toBe("2023-06-01");
    const id = JSON.parse(created.bytes.toString()).id;
    const polled = await call(`/v1/messages/batches/${id}`, headersFor(batches.tap.url));
    expectUnchanged(polled, batches.tap);
  });

  it("never forwards the client's own provider-key headers beside the target's", async () => {
    const body = '{"model":"claude-sonnet-4-5","max_tokens":8,"messages":[{"role":"user","content":"Hi"}]}';
    await call(
      "/v1/proxy/messages",
      {
        ...headersFor(messages.tap.url),
        "x-api-key": "sk-client-own",
        "api-key": "az-client",
        "x-goog-api-key": "g-client",
      },
      body,
    );
    const sent = messages.mock.requests.at(-1)!;
    expect(sent.headers["x-api-key"]).toBe("sk-ant-target");
    expect(sent.headers["api-key"]).toBeUndefined();
    expect(sent.headers["x-goog-api-key"]).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain("sk-client-own");
  });

  it("logs each pass-through call with its provider, status and path", async () => {
    await expect.poll(async () => (await logsOf("anthropic")).length, { timeout: 5000 }).toBeGreaterThanOrEqual(5);
    const [last] = await logsOf("anthropic");
    expect(last).toMatchObject({ provider: "anthropic", status: 200 });
    expect(JSON.stringify(await logsOf("anthropic"))).not.toContain("sk-ant-target");
  });
});

describe("azure", () => {
  let azure: { mock: OpenAIMock; tap: Tapped };
  const headersFor = (extra: Record<string, string> = {}) => ({
    "x-gateway-provider": "azure-openai",
    "x-gateway-custom-host": azure.tap.url,
    "x-gateway-azure-api-version": "2024-10-21",
    authorization: "Bearer azure-key-1",
    ...extra,
  });

  beforeAll(async () => {
    azure = await tapped(startAzureMock({ apiKey: "azure-key-1", deployments: ["gpt4o"] }));
  });

  it("/v1/deployments/{id}/chat/completions: api-key, the target's api-version added, JSON and SSE", async () => {
    const body = '{"messages":[{"role":"user","content":"Hi"}] ,"max_tokens":5}';
    const json = await call("/v1/deployments/gpt4o/chat/completions", headersFor(), body);
    expectUnchanged(json, azure.tap);
    const sent = azure.mock.requests.at(-1)!;
    expect(sent.path).toBe("/openai/deployments/gpt4o/chat/completions?api-version=2024-10-21");
    expect(sent.headers["api-key"]).toBe("azure-key-1");
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.toString()).toBe(body);

    const stream = await call(
      "/v1/proxy/deployments/gpt4o/chat/completions?api-version=2025-01-01-preview",
      headersFor(),
      '{"messages":[{"role":"user","content":"Hi"}],"stream":true}',
    );
    expectUnchanged(stream, azure.tap);
    expect(stream.contentType).toContain("text/event-stream");
    expect(stream.bytes.toString()).toContain("data: [DONE]");
    expect(azure.mock.requests.at(-1)!.path).toBe(
      "/openai/deployments/gpt4o/chat/completions?api-version=2025-01-01-preview",
    );
  });

  it("a client's api-key header cannot replace the target's", async () => {
    const wrong = await call(
      "/v1/deployments/gpt4o/chat/completions",
      headersFor({ "api-key": "client-guess" }),
      '{"messages":[{"role":"user","content":"Hi"}]}',
    );
    expect(wrong.status).toBe(200);
    expect(azure.mock.requests.at(-1)!.headers["api-key"]).toBe("azure-key-1");
  });
});

describe("bedrock (SigV4)", () => {
  const credentials = { accessKeyId: "AKIDBEDROCKPT", secretAccessKey: "bedrock-secret-never-logged" };
  let bedrock: { mock: BedrockMock; tap: Tapped };
  const headersFor = () => ({
    "x-gateway-provider": "bedrock",
    "x-gateway-custom-host": bedrock.tap.url,
    "x-gateway-aws-access-key-id": credentials.accessKeyId,
    "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
    "x-gateway-aws-region": "eu-central-1",
  });
  const converse = '{"messages":[{"role":"user","content":[{"text":"Hi"}]}],  "inferenceConfig":{"maxTokens":20}}';

  beforeAll(async () => {
    bedrock = await tapped(startBedrockMock({ credentials }));
  });

  it("/v1/model/{id}/converse: signed for the target's region and service, JSON answered unchanged", async () => {
    const json = await call("/v1/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse", headersFor(), converse);
    expectUnchanged(json, bedrock.tap);
    const sent = bedrock.mock.requests.at(-1)!;
    expect(sent.path).toBe("/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDBEDROCKPT\/\d{8}\/eu-central-1\/bedrock\/aws4_request, /,
    );
    expect(await checkSigV4(sent, credentials)).toMatchObject({ ok: true, region: "eu-central-1" });
    expect(sent.body.toString()).toBe(converse);
    expect(JSON.parse(json.bytes.toString()).output.message.role).toBe("assistant");
  });

  it("/v1/proxy/model/{id}/converse-stream: the AWS event stream relayed as its bytes", async () => {
    const stream = await call("/v1/proxy/model/amazon.nova-lite-v1%3A0/converse-stream", headersFor(), converse);
    expectUnchanged(stream, bedrock.tap);
    expect(stream.contentType).toBe("application/vnd.amazon.eventstream");
    expect(stream.bytes.includes(Buffer.from(":event-type"))).toBe(true);
    expect(bedrock.mock.requests.at(-1)!.path).toBe("/model/amazon.nova-lite-v1%3A0/converse-stream");
  });

  it("a wrong secret fails the signature check and the provider's error comes back raw", async () => {
    const failed = await call(
      "/v1/model/m/converse",
      { ...headersFor(), "x-gateway-aws-secret-access-key": "wrong" },
      converse,
    );
    expectUnchanged(failed, bedrock.tap, 403);
    expect(failed.bytes.toString()).toContain("signature does not match");
  });

  it("never logs or forwards the secret access key, nor a client x-api-key", async () => {
    await call("/v1/model/m/converse", { ...headersFor(), "x-api-key": "client-x-api-key" }, converse);
    const sent = bedrock.mock.requests.at(-1)!;
    expect(sent.headers["x-api-key"]).toBeUndefined();
    expect(JSON.stringify(sent.headers)).not.toContain(credentials.secretAccessKey);
    await expect.poll(async () => (await logsOf("bedrock")).length, { timeout: 5000 }).toBeGreaterThanOrEqual(4);
    const logs = await logsOf("bedrock");
    expect(logs[0]).toMatchObject({ provider: "bedrock", status: 200, path: "/v1/model/m/converse" });
    // The failed call is logged with its provider and the provider's status.
    expect(logs.find((log) => log.status === 403)).toMatchObject({ provider: "bedrock", path: "/v1/model/m/converse" });
    expect(logs[0].headers["x-gateway-aws-secret-access-key"]).toBe("[masked]");
    expect(JSON.stringify(logs)).not.toContain(credentials.secretAccessKey);
    for (const id of logs.map((log) => log.id)) {
      const detail = await fetch(`${gateway.url}/v1/logs/${id}`, {
        headers: { "x-gateway-api-key": gateway.adminKey },
      });
      expect(await detail.text()).not.toContain(credentials.secretAccessKey);
    }
  });
});

describe("vertex ai (OAuth)", () => {
  let vertex: { mock: VertexMock; tap: Tapped };
  let headers: Record<string, string>;
  const path = "/projects/mock-project/locations/us-central1/publishers/google/models/gemini-2.5-flash";

  beforeAll(async () => {
    vertex = await tapped(startVertexMock());
    const account = await createTestServiceAccount(vertex.mock.tokenUri);
    headers = {
      "x-gateway-provider": "vertex-ai",
      "x-gateway-custom-host": vertex.tap.url,
      "x-gateway-vertex-region": "us-central1",
      "x-gateway-vertex-service-account-json": account.json,
    };
  });

  it("exchanges the service account for a token once; JSON via /v1/..., SSE via /v1/proxy/...", async () => {
    const body = '{"contents":[{"role":"user","parts":[{"text":"Hi"}]}]}';
    const json = await call(`/v1${path}:generateContent`, headers, body);
    expectUnchanged(json, vertex.tap);
    const sent = vertex.mock.requests.at(-1)!;
    expect(sent.path).toBe(`/v1${path}:generateContent`);
    expect(sent.headers.authorization).toBe(`Bearer ${vertex.mock.accessToken}`);
    expect(sent.body.toString()).toBe(body);

    const stream = await call(`/v1/proxy${path}:streamGenerateContent?alt=sse`, headers, body);
    expectUnchanged(stream, vertex.tap);
    expect(stream.contentType).toContain("text/event-stream");
    expect(vertex.mock.requests.at(-1)!.path).toBe(`/v1${path}:streamGenerateContent?alt=sse`);
    expect(vertex.mock.tokenRequests()).toBe(1);
    await expect.poll(async () => (await logsOf("vertex-ai")).length, { timeout: 5000 }).toBe(2);
    expect(JSON.stringify(await logsOf("vertex-ai"))).not.toContain(vertex.mock.accessToken);
  });
});

describe("google and cohere", () => {
  let google: { mock: MockServer; tap: Tapped };
  let cohere: { mock: CohereMock; tap: Tapped };

  beforeAll(async () => {
    google = await tapped(startGoogleMock({ apiKey: "AIza-target" }));
    cohere = await tapped(startCohereMock({ apiKey: "co-target" }));
  });

  it("Gemini: /v1/models/{m}:generateContent and the proxied SSE stream with x-goog-api-key", async () => {
    const headers = {
      "x-gateway-provider": "google",
      "x-gateway-custom-host": google.tap.url,
      authorization: "Bearer AIza-target",
    };
    const body = '{"contents":[{"parts":[{"text":"Hi"}]}]}';
    const json = await call("/v1/models/gemini-2.5-flash:generateContent", headers, body);
    expectUnchanged(json, google.tap);
    const sent = google.mock.requests.at(-1)!;
    expect(sent.path).toBe("/v1beta/models/gemini-2.5-flash:generateContent");
    expect(sent.headers["x-goog-api-key"]).toBe("AIza-target");
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body.toString()).toBe(body);
    const stream = await call("/v1/proxy/models/gemini-2.5-flash:streamGenerateContent?alt=sse", headers, body);
    expectUnchanged(stream, google.tap);
    expect(stream.bytes.toString()).toMatch(/^data: /);
  });

  it("Cohere: /v1/v2/chat and /v1/proxy/v2/chat (SSE) reach Cohere's v2 API with a bearer key", async () => {
    const headers = {
      "x-gateway-provider": "cohere",
      "x-gateway-custom-host": cohere.tap.url,
      authorization: "Bearer co-target",
    };
    const body = '{"model":"command-r","messages":[{"role":"user","content":"Hi"}]}';
    const json = await call("/v1/v2/chat", headers, body);
    expectUnchanged(json, cohere.tap);
    const sent = cohere.mock.requests.at(-1)!;
    expect(sent.path).toBe("/v2/chat");
    expect(sent.headers.authorization).toBe("Bearer co-target");
    expect(sent.body.toString()).toBe(body);
    const stream = await call("/v1/proxy/v2/chat", headers, JSON.stringify({ ...JSON.parse(body), stream: true }));
    expectUnchanged(stream, cohere.tap);
    expect(stream.contentType).toContain("text/event-stream");
    // A path without its own version is Cohere's /v1 API (the mock has no /v1/tokenize: its 404 comes back raw).
    const tokenize = await call("/v1/tokenize", headers, '{"text":"hi","model":"command-r"}');
    expectUnchanged(tokenize, cohere.tap, 404);
    expect(cohere.mock.requests.at(-1)!.path).toBe("/v1/tokenize");
  });

  it("a config falls back from a failing Anthropic target to Google", async () => {
    const anthropic = await tapped(startAnthropicMock());
    const config = {
      strategy: { mode: "fallback" },
      targets: [
        { provider: "anthropic", api_key: "sk-ant-fallback", custom_host: anthropic.tap.url },
        { provider: "google", api_key: "AIza-target", custom_host: google.tap.url },
      ],
    };
    const body = '{"contents":[{"parts":[{"text":"Hi"}]}]}';
    const answer = await call(
      "/v1/proxy/models/gemini-2.5-flash:generateContent",
      { "x-gateway-config": JSON.stringify(config) },
      body,
    );
    expectUnchanged(answer, google.tap);
    expect(answer.headers.get("x-gateway-last-used-option-index")).toBe("config.targets[1]");
    expect(answer.headers.get("x-gateway-provider")).toBe("google");
    // Anthropic was asked first, with its own auth, and answered 404.
    const first = anthropic.mock.requests.at(-1)!;
    expect(first.path).toBe("/v1/models/gemini-2.5-flash:generateContent");
    expect(first.headers["x-api-key"]).toBe("sk-ant-fallback");
    expect(anthropic.tap.answers.at(-1)!.status).toBe(404);
    expect(google.mock.requests.at(-1)!.headers["x-goog-api-key"]).toBe("AIza-target");
  });
});

describe("fetch_integrated_models", () => {
  it("a saved config with fetch_integrated_models lists the catalog instead of the provider's models", async () => {
    const upstream = await startGoogleMock({ apiKey: "AIza-models" });
    mocks.push(upstream);
    const save = async (slug: string, extra: Record<string, unknown>) => {
      const response = await fetch(`${gateway.url}/v1/configs`, {
        method: "POST",
        headers: { "x-gateway-api-key": gateway.adminKey, "content-type": "application/json" },
        body: JSON.stringify({
          name: slug,
          slug,
          config: { provider: "google", api_key: "AIza-models", custom_host: upstream.url, ...extra },
        }),
      });
      return { status: response.status, body: await response.json() };
    };
    expect((await save("catalog-models", { fetch_integrated_models: true })).status).toBeLessThan(300);
    expect((await save("provider-models", {})).status).toBeLessThan(300);
    const list = async (config: string) =>
      (
        await fetch(`${gateway.url}/v1/models`, {
          headers: { "x-gateway-api-key": gateway.adminKey, "x-gateway-config": config },
        })
      ).json();

    const proxied = await list("provider-models");
    expect(proxied.data.map((model: any) => model.id)).toContain("gemini-2.5-flash");
    expect(proxied.data.length).toBeLessThan(10);
    const calls = upstream.requests.length;
    const catalog = await list("catalog-models");
    expect(catalog.data.length).toBeGreaterThan(100);
    expect(catalog.data[0]).toHaveProperty("pricing");
    expect(upstream.requests.length).toBe(calls);

    const nested = await save("nested-field", {
      provider: undefined,
      api_key: undefined,
      strategy: { mode: "fallback" },
      targets: [{ provider: "google", fetch_integrated_models: true }],
    });
    expect(nested.status).toBe(400);
    expect(JSON.stringify(nested.body)).toContain("targets[0].fetch_integrated_models");
    const wrongType = await save("wrong-type", { fetch_integrated_models: "yes" });
    expect(wrongType.status).toBe(400);
    expect(JSON.stringify(wrongType.body)).toContain("fetch_integrated_models");
  });
});

import { readFileSync } from "node:fs";
import { decodeProtectedHeader, importSPKI, jwtVerify } from "jose";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { toAnthropicMessagesRequest } from "../../../core/providers/anthropic/index.ts";
import { toGeminiRequest } from "../../../core/providers/google/chat.ts";
import { loadProvider } from "../../../core/providers/registry.ts";
import { decodeSse } from "../../../core/providers/stream/sse.ts";
import { type TransformContext, UpstreamError } from "../../../core/providers/types.ts";
import { parseTrustedHosts } from "../../../core/security/custom-host.ts";
import {
  CLOUD_PLATFORM_SCOPE,
  checkTokenUri,
  clearVertexTokenCache,
  parseServiceAccount,
  serviceAccountToken,
} from "../../../core/providers/vertex/auth.ts";
import { vertexAdapter } from "../../../core/providers/vertex/index.ts";
import { type MockServer, type RecordedRequest, sendJson, startMockServer } from "../../helpers/mock-server.ts";
import {
  createTestServiceAccount,
  startVertexMock,
  type TestServiceAccount,
  type VertexMock,
} from "../../mocks/vertex.ts";

const TRUSTED = parseTrustedHosts(["127.0.0.1"]);
const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/${name}`, import.meta.url), "utf8"));

function context(
  overrides: Partial<TransformContext> = {},
  vertex: TransformContext["target"]["vertex"] = {},
): TransformContext {
  return {
    target: { provider: "vertex-ai", apiKey: "ya29.given-token", vertex: { projectId: "my-project", ...vertex } },
    route: "chat",
    stream: false,
    model: "gemini-2.5-flash",
    now: 1_700_000_000,
    requestId: "chatcmpl-vertex",
    includeUsage: false,
    trustedHosts: TRUSTED,
    ...overrides,
  };
}

const chat = vertexAdapter.routes.chat!;
const messages = [
  { role: "system", content: "Be brief." },
  { role: "user", content: "Bonjour" },
];

beforeEach(() => {
  clearVertexTokenCache();
});

describe("vertex URLs and headers", () => {
  it("is registered under vertex-ai", async () => {
    expect(await loadProvider("vertex-ai")).toBe(vertexAdapter);
  });

  it("builds the regional generateContent URL with the given token, and the Gemini body of the google adapter", async () => {
    const request = await chat.buildRequest({ messages, temperature: 0.2 }, context());
    expect(request.url).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
    );
    expect(request.headers.authorization).toBe("Bearer ya29.given-token");
    expect(request.headers["x-goog-api-key"]).toBeUndefined();
    expect(JSON.parse(String(request.body))).toEqual(
      toGeminiRequest({ messages, temperature: 0.2 }, "gemini-2.5-flash"),
    );
  });

  it("uses streamGenerateContent?alt=sse, other regions, the global endpoint and custom hosts", async () => {
    const stream = await chat.buildRequest({ messages }, context({ stream: true }, { region: "europe-west4" }));
    expect(stream.url).toBe(
      "https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    const global = await chat.buildRequest({ messages }, context({}, { region: "global" }));
    expect(global.url).toBe(
      "https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-flash:generateContent",
    );
    const custom = await chat.buildRequest(
      { messages },
      context({
        target: {
          provider: "vertex-ai",
          apiKey: "t",
          customHost: "http://127.0.0.1:4000/",
          vertex: { projectId: "p" },
        },
      }),
    );
    expect(custom.url).toBe(
      "http://127.0.0.1:4000/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-flash:generateContent",
    );
  });

  it("refuses a region that is not a region and needs a project", async () => {
    await expect(async () => chat.buildRequest({ messages }, context({}, { region: "evil.com/x" }))).rejects.toThrow(
      UpstreamError,
    );
    await expect(async () =>
      chat.buildRequest({ messages }, context({ target: { provider: "vertex-ai", apiKey: "t" } })),
    ).rejects.toThrow(/project id/);
    await expect(async () => chat.buildRequest({ messages }, context({ model: "../x" }))).rejects.toThrow(
      UpstreamError,
    );
  });

  it("needs a credential", async () => {
    await expect(async () =>
      chat.buildRequest({ messages }, context({ target: { provider: "vertex-ai", vertex: { projectId: "p" } } })),
    ).rejects.toMatchObject({ status: 401 });
  });

  it("maps Gemini responses and streams with the shared transforms", () => {
    const completion: any = chat.transformResponse(fixture("google/generate-content-text.json"), context());
    expect(completion.choices[0].message.content).toBe("The capital of France is Paris.");
    const transformer = chat.stream!.createTransformer(context({ stream: true }));
    const chunks = fixture("google/stream-text.json").flatMap((event: unknown) =>
      transformer.push({ data: JSON.stringify(event) }),
    );
    expect(chunks.map((chunk: any) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("Hello, how can I help?");
  });
});

describe("vertex embeddings", () => {
  const embeddings = vertexAdapter.routes.embeddings!;
  it("uses :predict with one instance per input and counts tokens from the statistics", async () => {
    const ctx = context({ route: "embeddings", model: "text-embedding-005" });
    const request = await embeddings.buildRequest(
      { input: ["a b", "c"], dimensions: 3, task_type: "RETRIEVAL_DOCUMENT" },
      ctx,
    );
    expect(request.url).toMatch(/publishers\/google\/models\/text-embedding-005:predict$/);
    expect(JSON.parse(String(request.body))).toEqual({
      instances: [
        { content: "a b", task_type: "RETRIEVAL_DOCUMENT" },
        { content: "c", task_type: "RETRIEVAL_DOCUMENT" },
      ],
      parameters: { outputDimensionality: 3 },
    });
    expect(embeddings.transformResponse(fixture("vertex/predict-embeddings.json"), ctx)).toEqual({
      object: "list",
      data: [
        { object: "embedding", index: 0, embedding: [0.1, 0.2, 0.3] },
        { object: "embedding", index: 1, embedding: [0.4, 0.5, 0.6] },
      ],
      model: "text-embedding-005",
      usage: { prompt_tokens: 10, total_tokens: 10 },
    });
  });
});

describe("Anthropic models on vertex", () => {
  const claude = (overrides: Partial<TransformContext> = {}) =>
    context({ model: "claude-sonnet-4@20250514", ...overrides });

  it("uses rawPredict / streamRawPredict with the Messages body, vertex anthropic_version and no model", async () => {
    const request = await chat.buildRequest({ messages, max_tokens: 100 }, claude());
    expect(request.url).toBe(
      "https://us-central1-aiplatform.googleapis.com/v1/projects/my-project/locations/us-central1/publishers/anthropic/models/claude-sonnet-4@20250514:rawPredict",
    );
    const body = JSON.parse(String(request.body));
    expect(body.anthropic_version).toBe("vertex-2023-10-16");
    expect(body).not.toHaveProperty("model");
    expect(body).toEqual(
      toAnthropicMessagesRequest({ messages, max_tokens: 100 }, { anthropicVersion: "vertex-2023-10-16" }),
    );
    expect(request.headers.authorization).toBe("Bearer ya29.given-token");

    const stream = await chat.buildRequest({ messages }, claude({ stream: true }));
    expect(stream.url).toMatch(/publishers\/anthropic\/models\/claude-sonnet-4@20250514:streamRawPredict$/);
    expect(JSON.parse(String(stream.body)).stream).toBe(true);
  });

  it("maps the Messages answer", () => {
    const completion: any = chat.transformResponse(fixture("vertex/anthropic-raw-predict.json"), claude());
    expect(completion.choices[0].message.content).toBe("Bonjour !");
    expect(completion.choices[0].finish_reason).toBe("stop");
    expect(completion.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
  });
});

describe("service account token exchange", () => {
  let account: TestServiceAccount;
  let tokenServer: MockServer;
  let tokenRequests: RecordedRequest[];
  let answer: (request: RecordedRequest, res: import("node:http").ServerResponse) => void;

  beforeAll(async () => {
    tokenServer = await startMockServer((request, res) => answer(request, res));
    account = await createTestServiceAccount(`${tokenServer.url}/token`, "sa-project");
  });
  afterAll(() => tokenServer.close());
  beforeEach(() => {
    tokenRequests = [];
    answer = (request, res) => {
      tokenRequests.push(request);
      sendJson(res, 200, fixture("vertex/token-response.json"));
    };
  });

  const saContext = (overrides: Partial<TransformContext> = {}, json = account.json) =>
    context({ target: { provider: "vertex-ai", vertex: { serviceAccountJson: json } }, ...overrides });

  it("posts a well-formed RS256 assertion, uses the token, takes the project from the key and caches the token", async () => {
    const request = await chat.buildRequest({ messages }, saContext());
    expect(request.headers.authorization).toBe("Bearer ya29.test-access-token");
    expect(request.url).toContain("/projects/sa-project/locations/us-central1/");

    expect(tokenRequests).toHaveLength(1);
    const sent = tokenRequests[0];
    expect(sent.method).toBe("POST");
    expect(sent.path).toBe("/token");
    expect(sent.headers["content-type"]).toBe("application/x-www-form-urlencoded");
    const form = new URLSearchParams(sent.body.toString("utf8"));
    expect(form.get("grant_type")).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    const assertion = form.get("assertion")!;
    expect(assertion.split(".")).toHaveLength(3);
    expect(decodeProtectedHeader(assertion)).toEqual({ alg: "RS256", typ: "JWT", kid: "test-key-id" });

    const { payload } = await jwtVerify(assertion, await importSPKI(account.publicKeyPem, "RS256"), {
      issuer: account.clientEmail,
      audience: `${tokenServer.url}/token`,
    });
    expect(payload.scope).toBe(CLOUD_PLATFORM_SCOPE);
    expect(payload.exp! - payload.iat!).toBe(3600);
    expect(Math.abs(payload.iat! - Date.now() / 1000)).toBeLessThan(60);

    const again = await chat.buildRequest({ messages }, saContext({ stream: true }));
    expect(again.headers.authorization).toBe("Bearer ya29.test-access-token");
    expect(tokenRequests).toHaveLength(1);
  });

  it("shares one exchange between concurrent requests", async () => {
    const key = parseServiceAccount(account.json);
    const tokens = await Promise.all([1, 2, 3].map(() => serviceAccountToken(key, { trustedHosts: TRUSTED })));
    expect(tokens).toEqual(["ya29.test-access-token", "ya29.test-access-token", "ya29.test-access-token"]);
    expect(tokenRequests).toHaveLength(1);
  });

  it("does not hand a cached token to a key with the same email but another private key", async () => {
    await serviceAccountToken(parseServiceAccount(account.json), { trustedHosts: TRUSTED });
    const impostor = await createTestServiceAccount(`${tokenServer.url}/token`, "sa-project", account.clientEmail);
    await serviceAccountToken(parseServiceAccount(impostor.json), { trustedHosts: TRUSTED });
    expect(tokenRequests).toHaveLength(2);
  });

  it("exchanges again once the token is near its expiry", async () => {
    answer = (request, res) => {
      tokenRequests.push(request);
      sendJson(res, 200, { access_token: `short-${tokenRequests.length}`, expires_in: 1 });
    };
    const key = parseServiceAccount(account.json);
    expect(await serviceAccountToken(key, { trustedHosts: TRUSTED })).toBe("short-1");
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await serviceAccountToken(key, { trustedHosts: TRUSTED })).toBe("short-2");
  });

  it("uses the injected fetch", async () => {
    const calls: string[] = [];
    const fakeFetch = (async (url: string | URL | Request) => {
      calls.push(String(url));
      return new Response(JSON.stringify({ access_token: "from-injected-fetch", expires_in: 3600 }), { status: 200 });
    }) as typeof fetch;
    const request = await chat.buildRequest({ messages }, saContext({ fetch: fakeFetch }));
    expect(request.headers.authorization).toBe("Bearer from-injected-fetch");
    expect(calls).toEqual([`${tokenServer.url}/token`]);
    expect(tokenRequests).toHaveLength(0);
  });

  it("maps a refused exchange to a 401 without leaking the assertion", async () => {
    answer = (request, res) => {
      tokenRequests.push(request);
      sendJson(res, 400, { error: "invalid_grant", error_description: "Invalid JWT Signature." });
    };
    const error = await Promise.resolve(chat.buildRequest({ messages }, saContext())).catch((caught) => caught);
    expect(error).toBeInstanceOf(UpstreamError);
    expect(error.status).toBe(401);
    expect(error.type).toBe("authentication_error");
    expect(error.message).toMatch(/Invalid JWT Signature/);
    expect(error.message).not.toMatch(/eyJ/);
  });

  it("rejects a token_uri on a host that is neither Google's nor trusted, before any request", async () => {
    for (const tokenUri of [
      "https://evil.example.com/token",
      "http://oauth2.googleapis.com/token",
      "https://oauth2.googleapis.com.evil.io/token",
    ]) {
      const json = JSON.stringify({ ...JSON.parse(account.json), token_uri: tokenUri });
      await expect(async () => chat.buildRequest({ messages }, saContext({}, json))).rejects.toMatchObject({
        status: 400,
        code: "forbidden_token_uri",
      });
    }
    await expect(async () => chat.buildRequest({ messages }, saContext({ trustedHosts: undefined }))).rejects.toThrow(
      /not allowed/,
    );
    expect(tokenRequests).toHaveLength(0);
  });

  it("accepts Google's token hosts and defaults token_uri to oauth2.googleapis.com", () => {
    expect(checkTokenUri("https://oauth2.googleapis.com/token").host).toBe("oauth2.googleapis.com");
    expect(checkTokenUri("https://www.googleapis.com/oauth2/v4/token").host).toBe("www.googleapis.com");
    const { token_uri: _dropped, ...withoutUri } = JSON.parse(account.json);
    expect(parseServiceAccount(JSON.stringify(withoutUri)).token_uri).toBe("https://oauth2.googleapis.com/token");
  });

  it("rejects malformed keys", async () => {
    await expect(async () => chat.buildRequest({ messages }, saContext({}, "{not json"))).rejects.toMatchObject({
      status: 401,
    });
    const badKey = JSON.stringify({
      ...JSON.parse(account.json),
      private_key: "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    });
    await expect(async () => chat.buildRequest({ messages }, saContext({}, badKey))).rejects.toThrow(/PKCS#8/);
  });
});

describe("against the mock Vertex server", () => {
  let mock: VertexMock;
  let account: TestServiceAccount;
  beforeAll(async () => {
    mock = await startVertexMock({ text: "Vertex mock says hi" });
    account = await createTestServiceAccount(mock.tokenUri);
  });
  afterAll(() => mock.close());

  const mockContext = (overrides: Partial<TransformContext> = {}) =>
    context({
      target: {
        provider: "vertex-ai",
        customHost: mock.url,
        vertex: { serviceAccountJson: account.json, region: "europe-west1" },
      },
      ...overrides,
    });

  async function send(ctx: TransformContext, body: Record<string, any>, route: "chat" | "embeddings" = "chat") {
    const request = await vertexAdapter.routes[route]!.buildRequest(body, ctx);
    return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
  }

  it("exchanges a token once and answers Gemini chat, streams and embeddings", async () => {
    const response = await send(mockContext(), { messages });
    expect(response.status).toBe(200);
    const completion: any = chat.transformResponse(await response.json(), mockContext());
    expect(completion.choices[0].message.content).toBe("Vertex mock says hi");

    const streamCtx = mockContext({ stream: true });
    const streamed = await send(streamCtx, { messages, stream: true });
    const transformer = chat.stream!.createTransformer(streamCtx);
    const chunks: any[] = [];
    for await (const event of decodeSse(streamed.body as unknown as AsyncIterable<Uint8Array>))
      chunks.push(...transformer.push(event));
    chunks.push(...transformer.end());
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("Vertex mock says hi");

    const embedCtx = mockContext({ route: "embeddings", model: "text-embedding-005" });
    const embedded = await send(embedCtx, { input: ["one two", "three"] }, "embeddings");
    const list: any = vertexAdapter.routes.embeddings!.transformResponse(await embedded.json(), embedCtx);
    expect(list.data).toHaveLength(2);
    expect(list.usage.prompt_tokens).toBe(3);
    expect(mock.tokenRequests()).toBe(1);
  });

  it("answers Claude through rawPredict and streamRawPredict", async () => {
    const ctx = mockContext({ model: "claude-sonnet-4@20250514" });
    const response = await send(ctx, { messages });
    expect(response.status).toBe(200);
    const completion: any = chat.transformResponse(await response.json(), ctx);
    expect(completion.choices[0].message.content).toBe("Vertex mock says hi");

    const streamCtx = mockContext({ model: "claude-sonnet-4@20250514", stream: true });
    const streamed = await send(streamCtx, { messages, stream: true });
    const transformer = chat.stream!.createTransformer(streamCtx);
    const chunks: any[] = [];
    for await (const event of decodeSse(streamed.body as unknown as AsyncIterable<Uint8Array>))
      chunks.push(...transformer.push(event));
    chunks.push(...transformer.end());
    expect(chunks.map((chunk) => chunk.choices[0]?.delta?.content ?? "").join("")).toBe("Vertex mock says hi");
  });

  it("gets 401 from the mock without a valid token", async () => {
    const response = await send(
      context({ target: { provider: "vertex-ai", apiKey: "wrong", customHost: mock.url, vertex: { projectId: "p" } } }),
      { messages },
    );
    expect(response.status).toBe(401);
  });
});

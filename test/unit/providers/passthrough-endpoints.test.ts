import { beforeEach, describe, expect, it } from "vitest";
import { anthropicAdapter } from "../../../core/providers/anthropic/index.ts";
import { azureAIAdapter, azureOpenAIAdapter } from "../../../core/providers/azure/index.ts";
import { bedrockAdapter } from "../../../core/providers/bedrock/index.ts";
import { cohereAdapter } from "../../../core/providers/cohere/index.ts";
import { googleAdapter } from "../../../core/providers/google/index.ts";
import type {
  PassthroughContext,
  PassthroughEndpoint,
  ProviderAdapter,
  ProviderTarget,
  UpstreamRequest,
} from "../../../core/providers/types.ts";
import { UpstreamError } from "../../../core/providers/types.ts";
import { joinUrl } from "../../../core/providers/url.ts";
import { clearVertexTokenCache } from "../../../core/providers/vertex/auth.ts";
import { vertexAdapter } from "../../../core/providers/vertex/index.ts";
import { checkSigV4 } from "../../mocks/bedrock.ts";
import { createTestServiceAccount } from "../../mocks/vertex.ts";

/** Each provider's pass-through endpoint: base URL, the path the client's becomes, auth headers, signing. */

async function endpointOf(
  adapter: ProviderAdapter,
  target: Omit<ProviderTarget, "provider">,
  ctx: PassthroughContext = {},
): Promise<PassthroughEndpoint> {
  return adapter.passthrough!({ provider: adapter.id, ...target }, ctx);
}

/** The URL handlePassthrough builds from an endpoint and the client's path and query. */
function urlOf(endpoint: PassthroughEndpoint, path: string, search = ""): string {
  return joinUrl(endpoint.baseUrl, endpoint.path ?? path + search);
}

describe("anthropic pass-through", () => {
  it("uses api.anthropic.com/v1, x-api-key and the default anthropic-version", async () => {
    const endpoint = await endpointOf(anthropicAdapter, { apiKey: "sk-ant-1" }, { path: "/messages", headers: {} });
    expect(urlOf(endpoint, "/messages")).toBe("https://api.anthropic.com/v1/messages");
    expect(endpoint.headers).toEqual({ "x-api-key": "sk-ant-1", "anthropic-version": "2023-06-01" });
  });

  it("leaves the client's anthropic-version alone and keeps a custom host's /v1", async () => {
    const endpoint = await endpointOf(
      anthropicAdapter,
      { apiKey: "k", customHost: "https://proxy.example.com/v1/" },
      { path: "/models", headers: { "anthropic-version": "2024-01-01", "anthropic-beta": "x" } },
    );
    expect(urlOf(endpoint, "/models")).toBe("https://proxy.example.com/v1/models");
    expect(endpoint.headers["anthropic-version"]).toBeUndefined();
    const bare = await endpointOf(anthropicAdapter, { apiKey: "k", customHost: "https://proxy.example.com" });
    expect(urlOf(bare, "/messages")).toBe("https://proxy.example.com/v1/messages");
  });

  it("never lets a forwarded header replace the target's key", async () => {
    const endpoint = await endpointOf(anthropicAdapter, {
      apiKey: "sk-target",
      forwardHeaders: { "X-Api-Key": "sk-other", "anthropic-beta": "tools" },
    });
    expect(endpoint.headers["x-api-key"]).toBe("sk-target");
    expect(endpoint.headers["anthropic-beta"]).toBe("tools");
  });
});

describe("azure pass-through", () => {
  const azure = { resourceName: "res1" };

  it("Azure OpenAI: {resource}.openai.azure.com/openai + the path, api-key, the target's api-version added", async () => {
    const endpoint = await endpointOf(
      azureOpenAIAdapter,
      { apiKey: "azkey", azure: { ...azure, apiVersion: "2025-01-01-preview" } },
      { path: "/deployments/gpt/chat/completions", search: "" },
    );
    expect(urlOf(endpoint, "/deployments/gpt/chat/completions")).toBe(
      "https://res1.openai.azure.com/openai/deployments/gpt/chat/completions?api-version=2025-01-01-preview",
    );
    expect(endpoint.headers).toEqual({ "api-key": "azkey" });
  });

  it("keeps the client's api-version and the rest of its query; defaults to the GA version", async () => {
    const own = await endpointOf(
      azureOpenAIAdapter,
      { apiKey: "k", azure },
      { path: "/files", search: "?api-version=2024-06-01&limit=2" },
    );
    expect(urlOf(own, "/files", "?api-version=2024-06-01&limit=2")).toBe(
      "https://res1.openai.azure.com/openai/files?api-version=2024-06-01&limit=2",
    );
    const added = await endpointOf(
      azureOpenAIAdapter,
      { apiKey: "k", azure },
      { path: "/batches", search: "?limit=2" },
    );
    expect(urlOf(added, "/batches", "?limit=2")).toBe(
      "https://res1.openai.azure.com/openai/batches?limit=2&api-version=2024-10-21",
    );
  });

  it("v1 API: /openai/v1 + the path, no api-version; Entra tokens as Bearer", async () => {
    const token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
    const endpoint = await endpointOf(
      azureOpenAIAdapter,
      { apiKey: token, azure: { ...azure, apiVersion: "v1" } },
      { path: "/responses", search: "" },
    );
    expect(urlOf(endpoint, "/responses")).toBe("https://res1.openai.azure.com/openai/v1/responses");
    expect(endpoint.headers).toEqual({ authorization: `Bearer ${token}` });
  });

  it("Azure AI Foundry: the models base (or the custom host) and its api-version", async () => {
    const endpoint = await endpointOf(azureAIAdapter, { apiKey: "k", azure }, { path: "/info", search: "" });
    expect(urlOf(endpoint, "/info")).toBe(
      "https://res1.services.ai.azure.com/models/info?api-version=2024-05-01-preview",
    );
    const custom = await endpointOf(
      azureAIAdapter,
      { apiKey: "k", customHost: "https://m1.eastus.models.ai.azure.com" },
      { path: "/chat/completions", search: "?api-version=2024-08-01" },
    );
    expect(urlOf(custom, "/chat/completions", "?api-version=2024-08-01")).toBe(
      "https://m1.eastus.models.ai.azure.com/chat/completions?api-version=2024-08-01",
    );
  });

  it("needs a resource name or a custom host", async () => {
    await expect(endpointOf(azureOpenAIAdapter, { apiKey: "k" }, { path: "/x" })).rejects.toThrow(UpstreamError);
  });
});

describe("bedrock pass-through", () => {
  const credentials = { accessKeyId: "AKIDPASSTHROUGH", secretAccessKey: "secret-passthrough-key" };

  async function signed(
    target: Omit<ProviderTarget, "provider">,
    path: string,
    request: Omit<UpstreamRequest, "url">,
  ): Promise<{ endpoint: PassthroughEndpoint; sent: UpstreamRequest }> {
    const endpoint = await endpointOf(bedrockAdapter, target, { path, search: "" });
    const unsigned = { ...request, url: urlOf(endpoint, path), headers: { ...request.headers, ...endpoint.headers } };
    return { endpoint, sent: endpoint.sign ? await endpoint.sign(unsigned) : unsigned };
  }

  it("signs the final method, URL, headers and body with SigV4 for the target's region", async () => {
    const body = new TextEncoder().encode('{"messages":[{"role":"user","content":[{"text":"hi"}]}]}');
    const { sent } = await signed(
      { aws: { ...credentials, region: "eu-west-1" } },
      "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse",
      { method: "POST", headers: { "content-type": "application/json", "x-amz-date": "19990101T000000Z" }, body },
    );
    const url = new URL(sent.url);
    expect(url.origin).toBe("https://bedrock-runtime.eu-west-1.amazonaws.com");
    expect(url.pathname).toBe("/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
    expect(sent.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDPASSTHROUGH\/\d{8}\/eu-west-1\/bedrock\/aws4_request, SignedHeaders=.*content-type/,
    );
    // The client's own x-amz-date is replaced by the signer's.
    expect(sent.headers["x-amz-date"]).not.toBe("19990101T000000Z");
    const check = await checkSigV4(
      { method: "POST", path: url.pathname, headers: sent.headers, body: Buffer.from(body) },
      credentials,
    );
    expect(check).toMatchObject({ ok: true, region: "eu-west-1" });
    // A different body does not verify against that signature.
    const tampered = await checkSigV4(
      { method: "POST", path: url.pathname, headers: sent.headers, body: Buffer.from("{}") },
      credentials,
    );
    expect(tampered.ok).toBe(false);
    expect(JSON.stringify(sent)).not.toContain(credentials.secretAccessKey);
  });

  it("signs GETs without a body and a session token", async () => {
    const { sent } = await signed(
      { aws: { ...credentials, sessionToken: "session-1" } },
      "/control/foundation-models",
      { method: "GET", headers: {} },
    );
    expect(sent.url).toBe("https://bedrock.us-east-1.amazonaws.com/foundation-models");
    expect(sent.headers["x-amz-security-token"]).toBe("session-1");
    const check = await checkSigV4(
      { method: "GET", path: "/foundation-models", headers: sent.headers, body: Buffer.alloc(0) },
      { ...credentials, sessionToken: "session-1" },
    );
    expect(check.ok).toBe(true);
  });

  it("maps the agent prefixes to their hosts; the custom host replaces the runtime only", async () => {
    const aws = { ...credentials, region: "us-west-2" };
    const agentRuntime = await endpointOf(
      bedrockAdapter,
      { aws },
      { path: "/agent-runtime/retrieveAndGenerate", search: "?a=1" },
    );
    expect(urlOf(agentRuntime, "/agent-runtime/retrieveAndGenerate", "?a=1")).toBe(
      "https://bedrock-agent-runtime.us-west-2.amazonaws.com/retrieveAndGenerate?a=1",
    );
    const agent = await endpointOf(bedrockAdapter, { aws }, { path: "/agent/agents/", search: "" });
    expect(urlOf(agent, "/agent/agents/")).toBe("https://bedrock-agent.us-west-2.amazonaws.com/agents/");
    const custom = await endpointOf(
      bedrockAdapter,
      { aws, customHost: "https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com" },
      { path: "/model/m/invoke" },
    );
    expect(urlOf(custom, "/model/m/invoke")).toBe(
      "https://vpce-1.bedrock-runtime.us-west-2.vpce.amazonaws.com/model/m/invoke",
    );
  });

  it("uses a Bedrock API key as a bearer token, and refuses a target without credentials", async () => {
    const endpoint = await endpointOf(bedrockAdapter, { apiKey: "bedrock-api-key" }, { path: "/model/m/converse" });
    expect(endpoint.sign).toBeUndefined();
    expect(endpoint.headers.authorization).toBe("Bearer bedrock-api-key");
    await expect(endpointOf(bedrockAdapter, {}, { path: "/model/m/converse" })).rejects.toMatchObject({
      status: 401,
      code: "missing_credentials",
    });
    await expect(
      endpointOf(bedrockAdapter, { aws: { ...credentials, region: "us-east-1.evil.com/" } }, { path: "/x" }),
    ).rejects.toMatchObject({ status: 400, param: "aws_region" });
  });
});

describe("vertex pass-through", () => {
  beforeEach(() => clearVertexTokenCache());

  it("uses the regional endpoint with the service account's token, exchanged once", async () => {
    const account = await createTestServiceAccount("https://oauth2.googleapis.com/token");
    let exchanges = 0;
    const fakeFetch = (async () => {
      exchanges++;
      return new Response(JSON.stringify({ access_token: "ya29.passthrough", expires_in: 3600 }), { status: 200 });
    }) as unknown as typeof fetch;
    const target = { vertex: { region: "europe-west4", serviceAccountJson: account.json } };
    const endpoint = await endpointOf(vertexAdapter, target, {
      fetch: fakeFetch,
      path: "/projects/p/locations/europe-west4/publishers/google/models/g:generateContent",
    });
    expect(endpoint.baseUrl).toBe("https://europe-west4-aiplatform.googleapis.com/v1");
    expect(endpoint.headers.authorization).toBe("Bearer ya29.passthrough");
    await endpointOf(vertexAdapter, target, { fetch: fakeFetch });
    expect(exchanges).toBe(1);
  });

  it("serves the global region from aiplatform.googleapis.com; a given access token is used as it is", async () => {
    const endpoint = await endpointOf(vertexAdapter, { apiKey: "ya29.given", vertex: { region: "global" } });
    expect(endpoint.baseUrl).toBe("https://aiplatform.googleapis.com/v1");
    expect(endpoint.headers).toEqual({ authorization: "Bearer ya29.given" });
    const custom = await endpointOf(vertexAdapter, { apiKey: "t", customHost: "https://vertex.example.com/v1beta1" });
    expect(custom.baseUrl).toBe("https://vertex.example.com/v1beta1");
    await expect(endpointOf(vertexAdapter, {})).rejects.toMatchObject({ status: 401 });
  });
});

describe("google and cohere pass-through", () => {
  it("Gemini: generativelanguage.googleapis.com/v1beta with x-goog-api-key", async () => {
    const endpoint = await endpointOf(googleAdapter, { apiKey: "AIza-1" });
    expect(urlOf(endpoint, "/models/gemini-2.5-flash:streamGenerateContent", "?alt=sse")).toBe(
      "https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse",
    );
    expect(endpoint.headers).toEqual({ "x-goog-api-key": "AIza-1" });
  });

  it("Cohere: the gateway's /v1 is Cohere's /v1; a path naming its version goes to that version", async () => {
    const v1 = await endpointOf(cohereAdapter, { apiKey: "co-1" }, { path: "/tokenize" });
    expect(urlOf(v1, "/tokenize")).toBe("https://api.cohere.com/v1/tokenize");
    expect(v1.headers).toEqual({ authorization: "Bearer co-1" });
    const v2 = await endpointOf(cohereAdapter, { apiKey: "co-1" }, { path: "/v2/chat" });
    expect(urlOf(v2, "/v2/chat")).toBe("https://api.cohere.com/v2/chat");
    const custom = await endpointOf(
      cohereAdapter,
      { apiKey: "co-1", customHost: "http://127.0.0.1:9/" },
      { path: "/v1/models" },
    );
    expect(urlOf(custom, "/v1/models")).toBe("http://127.0.0.1:9/v1/models");
    // A path segment that only starts like a version is not one.
    const other = await endpointOf(cohereAdapter, { apiKey: "co-1" }, { path: "/v2chat" });
    expect(urlOf(other, "/v2chat")).toBe("https://api.cohere.com/v1/v2chat");
  });
});

import { readFileSync } from "node:fs";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { azureAIAdapter, azureOpenAIAdapter } from "../../../core/providers/azure/index.ts";
import {
  AZURE_AI_INFERENCE_API_VERSION,
  AZURE_OPENAI_API_VERSION,
  azureAuthHeaders,
  looksLikeEntraToken,
} from "../../../core/providers/azure/endpoints.ts";
import { mapUpstreamError } from "../../../core/providers/errors.ts";
import { decodeSse } from "../../../core/providers/stream/sse.ts";
import type {
  ProviderAdapter,
  ProviderTarget,
  RouteKind,
  TransformContext,
  UpstreamEvent,
  UpstreamRequest,
} from "../../../core/providers/types.ts";
import { UpstreamError } from "../../../core/providers/types.ts";
import { startAzureMock } from "../../mocks/azure.ts";
import type { OpenAIMock } from "../../mocks/openai.ts";

const fixture = (dir: string, name: string) => new URL(`../../fixtures/${dir}/${name}`, import.meta.url);
const json = (dir: string, name: string) => JSON.parse(readFileSync(fixture(dir, name), "utf8"));

type Azure = NonNullable<ProviderTarget["azure"]>;

function ctx(
  overrides: Partial<Omit<TransformContext, "target">> & { target?: Partial<ProviderTarget>; azure?: Azure } = {},
): TransformContext {
  const { target, azure, ...rest } = overrides;
  return {
    route: "chat",
    stream: false,
    model: "gpt-4o",
    now: 1_700_000_000,
    requestId: "req-1",
    includeUsage: false,
    ...rest,
    target: {
      provider: "azure-openai",
      apiKey: "0123456789abcdef0123456789abcdef",
      azure: azure ?? { resourceName: "contoso" },
      ...target,
    },
  };
}

function build(
  adapter: ProviderAdapter,
  route: RouteKind,
  body: Record<string, any>,
  context: TransformContext,
): UpstreamRequest {
  const request = adapter.routes[route]?.buildRequest(body, context);
  if (!request || request instanceof Promise) throw new Error("expected a synchronous request");
  return request;
}

function thrown(fn: () => unknown): UpstreamError {
  try {
    fn();
  } catch (error) {
    if (error instanceof UpstreamError) return error;
    throw error;
  }
  throw new Error("expected an UpstreamError");
}

async function* single(bytes: Uint8Array): AsyncIterable<Uint8Array> {
  yield bytes;
}

async function collect(source: AsyncIterable<UpstreamEvent>): Promise<UpstreamEvent[]> {
  const events: UpstreamEvent[] = [];
  for await (const event of source) events.push(event);
  return events;
}

// A syntactically valid JWT (header.payload.signature), the shape of a Microsoft Entra ID access token.
const ENTRA_TOKEN =
  "eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiIsImtpZCI6InRlc3QifQ.eyJhdWQiOiJodHRwczovL2NvZ25pdGl2ZXNlcnZpY2VzLmF6dXJlLmNvbSJ9.c2lnbmF0dXJl";

describe("azure-openai URLs", () => {
  it("builds deployment URLs with the default GA api-version", () => {
    const context = ctx({ azure: { resourceName: "contoso", deploymentId: "gpt4o-prod" } });
    expect(AZURE_OPENAI_API_VERSION).toBe("2024-10-21");
    expect(build(azureOpenAIAdapter, "chat", { model: "gpt-4o", messages: [] }, context).url).toBe(
      "https://contoso.openai.azure.com/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21",
    );
    expect(
      build(
        azureOpenAIAdapter,
        "completions",
        { prompt: "x" },
        ctx({ route: "completions", azure: { resourceName: "contoso", deploymentId: "instruct" } }),
      ).url,
    ).toBe("https://contoso.openai.azure.com/openai/deployments/instruct/completions?api-version=2024-10-21");
    expect(
      build(
        azureOpenAIAdapter,
        "embeddings",
        { input: "x" },
        ctx({ route: "embeddings", model: "text-embedding-3-large" }),
      ).url,
    ).toBe(
      "https://contoso.openai.azure.com/openai/deployments/text-embedding-3-large/embeddings?api-version=2024-10-21",
    );
  });

  it("defaults the deployment to the model and honours a configured api-version", () => {
    const context = ctx({ model: "gpt-4o-mini", azure: { resourceName: "contoso", apiVersion: "2025-01-01-preview" } });
    expect(build(azureOpenAIAdapter, "chat", { messages: [] }, context).url).toBe(
      "https://contoso.openai.azure.com/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-01-01-preview",
    );
  });

  it("encodes deployment names", () => {
    const context = ctx({ azure: { resourceName: "contoso", deploymentId: "my deployment/1" } });
    expect(build(azureOpenAIAdapter, "chat", { messages: [] }, context).url).toContain(
      "/deployments/my%20deployment%2F1/",
    );
  });

  it("uses the custom host instead of the resource origin", () => {
    const context = ctx({ azure: { deploymentId: "d1" }, target: { customHost: "http://127.0.0.1:9000/" } });
    expect(build(azureOpenAIAdapter, "chat", { messages: [] }, context).url).toBe(
      "http://127.0.0.1:9000/openai/deployments/d1/chat/completions?api-version=2024-10-21",
    );
  });

  it("speaks the version-less v1 API, routing by model", () => {
    const context = ctx({ azure: { resourceName: "contoso", apiVersion: "v1", deploymentId: "gpt4o-prod" } });
    const request = build(azureOpenAIAdapter, "chat", { model: "gpt-4o", messages: [] }, context);
    expect(request.url).toBe("https://contoso.openai.azure.com/openai/v1/chat/completions");
    expect(JSON.parse(String(request.body)).model).toBe("gpt4o-prod");
    const noDeployment = build(
      azureOpenAIAdapter,
      "chat",
      { model: "gpt-4o", messages: [] },
      ctx({ azure: { resourceName: "contoso", apiVersion: "v1" } }),
    );
    expect(JSON.parse(String(noDeployment.body)).model).toBe("gpt-4o");
  });

  it("refuses to build without a resource or custom host, and rejects odd resource names", () => {
    const missing = thrown(() => build(azureOpenAIAdapter, "chat", { messages: [] }, ctx({ azure: {} })));
    expect(missing.status).toBe(400);
    expect(missing.code).toBe("azure_resource_required");
    const odd = thrown(() =>
      build(azureOpenAIAdapter, "chat", { messages: [] }, ctx({ azure: { resourceName: "evil.com/x?" } })),
    );
    expect(odd.code).toBe("azure_resource_invalid");
  });

  it("offers chat, completions, embeddings, responses, images and audio; chat and completions stream", () => {
    expect(Object.keys(azureOpenAIAdapter.routes).sort()).toEqual([
      "chat",
      "completions",
      "embeddings",
      "image_edits",
      "image_generations",
      "responses",
      "speech",
      "transcriptions",
      "translations",
    ]);
    expect(azureOpenAIAdapter.routes.responses?.stream?.framing).toBe("sse");
    expect(azureOpenAIAdapter.routes.chat?.stream?.framing).toBe("sse");
    expect(azureOpenAIAdapter.routes.embeddings?.stream).toBeUndefined();
  });
});

describe("azure auth", () => {
  it("sends keys as api-key and Entra tokens as Bearer", () => {
    expect(looksLikeEntraToken(ENTRA_TOKEN)).toBe(true);
    expect(looksLikeEntraToken("0123456789abcdef0123456789abcdef")).toBe(false);
    expect(looksLikeEntraToken("eyJnot-a-jwt")).toBe(false);
    expect(azureAuthHeaders("0123456789abcdef0123456789abcdef")).toEqual({
      "api-key": "0123456789abcdef0123456789abcdef",
    });
    expect(azureAuthHeaders(ENTRA_TOKEN)).toEqual({ authorization: `Bearer ${ENTRA_TOKEN}` });
    expect(azureAuthHeaders(undefined)).toEqual({});
  });

  it("puts the auth and forwarded headers on the request", () => {
    const request = build(
      azureOpenAIAdapter,
      "chat",
      { messages: [] },
      ctx({ target: { forwardHeaders: { "x-ms-client-request-id": "abc" } } }),
    );
    expect(request.headers).toEqual({
      "api-key": "0123456789abcdef0123456789abcdef",
      "x-ms-client-request-id": "abc",
      "content-type": "application/json",
    });
    const bearer = build(azureOpenAIAdapter, "chat", { messages: [] }, ctx({ target: { apiKey: ENTRA_TOKEN } }));
    expect(bearer.headers.authorization).toBe(`Bearer ${ENTRA_TOKEN}`);
    expect(bearer.headers).not.toHaveProperty("api-key");
  });
});

describe("azure-openai bodies and answers", () => {
  it("passes OpenAI bodies through untouched", () => {
    const body = json("openai", "chat-request.json");
    const request = build(azureOpenAIAdapter, "chat", body, ctx());
    expect(request.method).toBe("POST");
    expect(JSON.parse(String(request.body))).toEqual(body);
  });

  it("asks for stream usage like the OpenAI adapter", () => {
    const request = build(azureOpenAIAdapter, "chat", { messages: [], stream: true }, ctx({ stream: true }));
    expect(JSON.parse(String(request.body)).stream_options).toEqual({ include_usage: true });
    const own = build(
      azureOpenAIAdapter,
      "chat",
      { messages: [], stream: true },
      ctx({ stream: true, includeUsage: true }),
    );
    expect(JSON.parse(String(own.body))).not.toHaveProperty("stream_options");
  });

  it("returns Azure answers (with content filter results) as they came", () => {
    const upstream = json("azure", "chat-completion.json");
    expect(azureOpenAIAdapter.routes.chat?.transformResponse(upstream, ctx())).toBe(upstream);
  });

  it("passes stream chunks through, the choice-less filter chunk included", async () => {
    const events = await collect(decodeSse(single(readFileSync(fixture("azure", "chat-stream.sse")))));
    const transformer = azureOpenAIAdapter.routes.chat?.stream?.createTransformer(ctx({ stream: true }));
    const chunks = events
      .flatMap((event) => transformer?.push(event) ?? [])
      .map((chunk) => JSON.parse(chunk as string));
    expect(chunks).toHaveLength(5);
    expect(chunks[0]).toMatchObject({ choices: [], prompt_filter_results: [{ prompt_index: 0 }] });
    expect(chunks[2].choices[0].delta.content).toBe("Hi there");
    expect(chunks[4].usage).toEqual({ completion_tokens: 2, prompt_tokens: 9, total_tokens: 11 });
  });

  it("maps Azure's content filter error with the generic mapper", () => {
    const error = mapUpstreamError(400, readFileSync(fixture("azure", "error-content-filter.json"), "utf8"));
    expect(error.code).toBe("content_filter");
    expect(error.param).toBe("prompt");
    expect(error.type).toBe("invalid_request_error");
  });
});

describe("azure-ai (Foundry models)", () => {
  it("builds /models URLs with the inference api-version and routes by deployment name", () => {
    const context = ctx({
      target: { provider: "azure-ai" },
      azure: { resourceName: "contoso-ai", deploymentId: "Mistral-large" },
    });
    const request = build(
      azureAIAdapter,
      "chat",
      { model: "mistral-large", messages: [], stream: true },
      { ...context, stream: true },
    );
    expect(request.url).toBe(
      `https://contoso-ai.services.ai.azure.com/models/chat/completions?api-version=${AZURE_AI_INFERENCE_API_VERSION}`,
    );
    const body = JSON.parse(String(request.body));
    expect(body.model).toBe("Mistral-large");
    expect(body).not.toHaveProperty("stream_options");
    expect(request.headers["extra-parameters"]).toBe("pass-through");
    expect(request.headers["api-key"]).toBeDefined();
  });

  it("takes a custom host as the whole base (serverless endpoints)", () => {
    const context = ctx({
      route: "embeddings",
      azure: {},
      target: { customHost: "https://my-llama.eastus2.models.ai.azure.com" },
    });
    expect(build(azureAIAdapter, "embeddings", { model: "cohere-embed", input: "x" }, context).url).toBe(
      `https://my-llama.eastus2.models.ai.azure.com/embeddings?api-version=${AZURE_AI_INFERENCE_API_VERSION}`,
    );
  });

  it("needs a resource or a custom host", () => {
    expect(thrown(() => build(azureAIAdapter, "chat", { messages: [] }, ctx({ azure: {} }))).status).toBe(400);
  });
});

describe("against the mock Azure resource", () => {
  let mock: OpenAIMock;
  const KEY = "0123456789abcdef0123456789abcdef";
  beforeAll(async () => {
    mock = await startAzureMock({ apiKey: KEY, deployments: ["gpt4o-prod", "embed"] });
  });
  afterAll(() => mock.close());
  beforeEach(() => mock.reset());

  async function call(route: RouteKind, body: Record<string, any>, context: TransformContext) {
    const request = build(azureOpenAIAdapter, route, body, context);
    return fetch(request.url, { method: request.method, headers: request.headers, body: request.body as string });
  }
  const at = (
    azure: Azure,
    extra: Partial<Omit<TransformContext, "target">> & { target?: Partial<ProviderTarget> } = {},
  ) => ctx({ ...extra, azure, target: { customHost: mock.url, ...extra.target } });

  it("answers chat with Azure annotations and sees the Azure path and key", async () => {
    const response = await call(
      "chat",
      { messages: [{ role: "user", content: "hi" }] },
      at({ deploymentId: "gpt4o-prod" }),
    );
    expect(response.status).toBe(200);
    const answer = await response.json();
    expect(answer.prompt_filter_results).toBeDefined();
    expect(answer.choices[0].content_filter_results).toBeDefined();
    expect(mock.lastRequest()?.path).toBe("/openai/deployments/gpt4o-prod/chat/completions?api-version=2024-10-21");
    expect(mock.lastRequest()?.headers["api-key"]).toBe(KEY);
  });

  it("streams with the filter chunk first and usage last", async () => {
    const response = await call(
      "chat",
      { messages: [], stream: true },
      at({ deploymentId: "gpt4o-prod" }, { stream: true }),
    );
    const events = await collect(decodeSse(response.body as AsyncIterable<Uint8Array>));
    const chunks = events.filter((event) => event.data !== "[DONE]").map((event) => JSON.parse(event.data));
    expect(chunks[0].choices).toEqual([]);
    expect(chunks[0].prompt_filter_results).toBeDefined();
    expect(chunks.at(-1)?.usage).toBeDefined();
  });

  it("answers 401 on a wrong key and 404 on an unknown deployment", async () => {
    expect(
      (await call("chat", { messages: [] }, at({ deploymentId: "gpt4o-prod" }, { target: { apiKey: "wrong" } })))
        .status,
    ).toBe(401);
    const missing = await call("chat", { messages: [] }, at({ deploymentId: "nope" }));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("DeploymentNotFound");
  });

  it("serves embeddings on the embeddings deployment", async () => {
    const response = await call("embeddings", { input: ["a"] }, at({ deploymentId: "embed" }, { route: "embeddings" }));
    expect((await response.json()).data[0].object).toBe("embedding");
  });
});

import OpenAI from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type TestGateway, startTestGateway } from "../helpers/gateway.ts";
import type { MockServer } from "../helpers/mock-server.ts";
import { type AnthropicMock, startAnthropicMock } from "../mocks/anthropic.ts";
import { startAzureMock } from "../mocks/azure.ts";
import { type BedrockMock, startBedrockMock } from "../mocks/bedrock.ts";
import { startCohereMock } from "../mocks/cohere.ts";
import { startGoogleMock } from "../mocks/google.ts";
import { startOpenAIMock } from "../mocks/openai.ts";
import { type VertexMock, createTestServiceAccount, startVertexMock } from "../mocks/vertex.ts";
import { validatingFetch } from "../helpers/openai-schema.ts";

/**
 * Each provider family end to end: the official openai client -> the local gateway -> a mock that speaks the
 * provider's documented wire format over real HTTP. The mocks reject requests the real provider would reject
 * (missing auth headers, malformed bodies, bad SigV4), so these tests prove the transforms on the wire.
 */

let gateway: TestGateway;
const mocks: MockServer[] = [];
const IMAGE =
  "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

beforeAll(async () => {
  gateway = await startTestGateway();
});

afterAll(async () => {
  await gateway?.close();
  await Promise.all(mocks.map((mock) => mock.close()));
});

function clientFor(headers: Record<string, string>, apiKey = "provider-key"): OpenAI {
  return new OpenAI({
    // Every OpenAI-shaped answer is checked against OpenAI's published OpenAPI document.
    fetch: validatingFetch(),
    apiKey,
    baseURL: `${gateway.url}/v1`,
    defaultHeaders: { "x-gateway-api-key": gateway.adminKey, ...headers },
    maxRetries: 0,
  });
}

const tools: OpenAI.Chat.ChatCompletionTool[] = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Weather for a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

async function collectStream(stream: AsyncIterable<OpenAI.Chat.ChatCompletionChunk>) {
  let text = "";
  let finish: string | null = null;
  let usage: OpenAI.CompletionUsage | undefined;
  const toolNames: string[] = [];
  for await (const chunk of stream) {
    const choice = chunk.choices[0];
    text += choice?.delta?.content ?? "";
    for (const call of choice?.delta?.tool_calls ?? []) if (call.function?.name) toolNames.push(call.function.name);
    if (choice?.finish_reason) finish = choice.finish_reason;
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, finish, usage, toolNames };
}

describe("anthropic", () => {
  let mock: AnthropicMock;
  let client: OpenAI;
  beforeAll(async () => {
    mock = await startAnthropicMock({ delayMs: 5 });
    mocks.push(mock);
    client = clientFor({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": mock.url });
  });

  it("chat: system to `system`, the key as x-api-key, answer in OpenAI shape with usage", async () => {
    const answer = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(answer.object).toBe("chat.completion");
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(answer.choices[0]!.finish_reason).toBe("stop");
    expect(answer.usage!.total_tokens).toBe(answer.usage!.prompt_tokens + answer.usage!.completion_tokens);
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe("/v1/messages");
    expect(sent.headers["x-api-key"]).toBe("provider-key");
    expect(sent.json()).toMatchObject({ system: expect.anything(), messages: [{ role: "user" }] });
  });

  it("streaming with usage", async () => {
    const stream = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Hi" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const result = await collectStream(stream);
    expect(result.text.length).toBeGreaterThan(0);
    expect(result.finish).toBe("stop");
    expect(result.usage?.prompt_tokens).toBeGreaterThan(0);
  });

  it("tools, streamed: tool_use becomes tool_calls", async () => {
    const answer = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools,
    });
    expect(answer.choices[0]!.finish_reason).toBe("tool_calls");
    expect(answer.choices[0]!.message.tool_calls![0]!.type).toBe("function");
    const stream = await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [{ role: "user", content: "Weather in Paris?" }],
      tools,
      stream: true,
    });
    const result = await collectStream(stream);
    expect(result.finish).toBe("tool_calls");
    expect(result.toolNames.length).toBeGreaterThan(0);
    expect(mock.requests.at(-1)!.json().tools[0]).toMatchObject({
      name: "get_weather",
      input_schema: { type: "object" },
    });
  });

  it("images: a data URL becomes a base64 image block", async () => {
    await client.chat.completions.create({
      model: "claude-sonnet-4-5",
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            { type: "image_url", image_url: { url: IMAGE } },
          ],
        },
      ],
    });
    const content = mock.requests.at(-1)!.json().messages[0].content;
    expect(content).toContainEqual(
      expect.objectContaining({
        type: "image",
        source: expect.objectContaining({ type: "base64", media_type: "image/png" }),
      }),
    );
  });

  it("provider errors keep their status", async () => {
    mock.setScenario("overloaded");
    try {
      const error = await client.chat.completions
        .create({ model: "claude-sonnet-4-5", messages: [{ role: "user", content: "Hi" }] })
        .catch((caught) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.status).toBe(529);
    } finally {
      mock.setScenario("auto");
    }
  });
});

describe("google gemini", () => {
  let mock: MockServer;
  let client: OpenAI;
  beforeAll(async () => {
    mock = await startGoogleMock({ apiKey: "provider-key", streamDelayMs: 5 });
    mocks.push(mock);
    client = clientFor({ "x-gateway-provider": "google", "x-gateway-custom-host": mock.url });
  });

  it("chat, streaming, tools, images and embeddings", async () => {
    const answer = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(answer.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(mock.requests.at(-1)!.path).toContain("/v1beta/models/gemini-2.5-flash:generateContent");

    const stream = await collectStream(
      await client.chat.completions.create({
        model: "gemini-2.5-flash",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      }),
    );
    expect(stream.text.length).toBeGreaterThan(0);
    expect(mock.requests.at(-1)!.path).toContain(":streamGenerateContent?alt=sse");

    const withTools = await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: "Weather?" }],
      tools,
    });
    expect(mock.requests.at(-1)!.json().tools[0].functionDeclarations[0].name).toBe("get_weather");
    const call = withTools.choices[0]!.message.tool_calls?.[0];
    expect(call && "function" in call ? call.function.name : withTools.choices[0]!.message.content).toBeTruthy();

    await client.chat.completions.create({
      model: "gemini-2.5-flash",
      messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: IMAGE } }] }],
    });
    expect(JSON.stringify(mock.requests.at(-1)!.json().contents)).toContain('"inlineData"');

    const embedding = await client.embeddings.create({ model: "text-embedding-004", input: ["a", "b"] });
    expect(embedding.data).toHaveLength(2);
    // The Gemini API reports no tokens for embeddings: the gateway counts them, and prices them.
    expect(embedding.usage.prompt_tokens).toBeGreaterThan(0);
    const priced = await client.embeddings
      .create({ model: "gemini-embedding-001", input: "a longer text to embed" })
      .withResponse();
    expect(priced.data.usage.prompt_tokens).toBeGreaterThan(0);
    expect(Number(priced.response.headers.get("x-gateway-cost"))).toBeGreaterThan(0);
  });
});

describe("vertex ai", () => {
  let mock: VertexMock;
  it("exchanges a service-account key for a token once, then calls Gemini on Vertex", async () => {
    mock = await startVertexMock();
    mocks.push(mock);
    const account = await createTestServiceAccount(mock.tokenUri);
    const client = clientFor({
      "x-gateway-provider": "vertex-ai",
      "x-gateway-custom-host": mock.url,
      "x-gateway-vertex-region": "us-central1",
      "x-gateway-vertex-service-account-json": account.json,
    });
    for (let i = 0; i < 2; i++) {
      const answer = await client.chat.completions.create({
        model: "gemini-2.5-pro",
        messages: [{ role: "user", content: "Hi" }],
      });
      expect(answer.choices[0]!.message.content).toBeTruthy();
    }
    expect(mock.tokenRequests()).toBe(1);
    const sent = mock.requests.at(-1)!;
    expect(sent.headers.authorization).toBe(`Bearer ${mock.accessToken}`);
    expect(sent.path).toContain(
      "/projects/mock-project/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent",
    );
    expect(sent.headers["x-vertex-ai-llm-request-type"]).toBeUndefined();
  });

  it("X-Vertex-AI-LLM-Request-Type belongs to the Vertex header family: sent to Vertex AI, to no one else", async () => {
    const account = await createTestServiceAccount(mock.tokenUri);
    const vertexHeaders = {
      "x-gateway-provider": "vertex-ai",
      "x-gateway-custom-host": mock.url,
      "x-gateway-vertex-region": "us-central1",
      "x-gateway-vertex-service-account-json": account.json,
    };
    for (const [given, sent] of [
      ["dedicated", "dedicated"],
      ["Shared", "shared"],
    ]) {
      const client = clientFor({ ...vertexHeaders, "X-Vertex-AI-LLM-Request-Type": given! });
      await client.chat.completions.create({ model: "gemini-2.5-pro", messages: [{ role: "user", content: "Hi" }] });
      expect(mock.requests.at(-1)!.headers["x-vertex-ai-llm-request-type"]).toBe(sent);
      // Claude on Vertex (rawPredict) too.
      await client.chat.completions.create({
        model: "claude-sonnet-4-5@20250929",
        messages: [{ role: "user", content: "Hi" }],
      });
      expect(mock.requests.at(-1)!.path).toContain("/publishers/anthropic/models/");
      expect(mock.requests.at(-1)!.headers["x-vertex-ai-llm-request-type"]).toBe(sent);
    }
    await expect(
      clientFor({ ...vertexHeaders, "X-Vertex-AI-LLM-Request-Type": "premium" }).chat.completions.create({
        model: "gemini-2.5-pro",
        messages: [{ role: "user", content: "Hi" }],
      }),
    ).rejects.toMatchObject({ status: 400, param: "x-vertex-ai-llm-request-type" });

    const upstream = await startOpenAIMock();
    mocks.push(upstream);
    await clientFor({
      "x-gateway-provider": "openai",
      "x-gateway-custom-host": `${upstream.url}/v1`,
      "X-Vertex-AI-LLM-Request-Type": "dedicated",
    }).chat.completions.create({ model: "gpt-4o-mini", messages: [{ role: "user", content: "Hi" }] });
    expect(upstream.lastRequest()!.headers["x-vertex-ai-llm-request-type"]).toBeUndefined();
  });
});

describe("aws bedrock", () => {
  let mock: BedrockMock;
  let client: OpenAI;
  const credentials = {
    accessKeyId: "AKIDEXAMPLE",
    secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    sessionToken: "session-token",
  };
  beforeAll(async () => {
    mock = await startBedrockMock({ credentials });
    mocks.push(mock);
    client = clientFor({
      "x-gateway-provider": "bedrock",
      "x-gateway-custom-host": mock.url,
      "x-gateway-aws-access-key-id": credentials.accessKeyId,
      "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
      "x-gateway-aws-session-token": credentials.sessionToken,
      "x-gateway-aws-region": "us-east-1",
    });
  });

  it("Converse with a verified SigV4 signature, ConverseStream over the binary event stream, tools, embeddings", async () => {
    const model = "anthropic.claude-3-5-sonnet-20240620-v1:0";
    const answer = await client.chat.completions.create({
      model,
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Hi" },
      ],
    });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(mock.requests.at(-1)!.headers["x-amz-security-token"]).toBe("session-token");

    const stream = await collectStream(
      await client.chat.completions.create({
        model,
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(stream.text.length).toBeGreaterThan(0);
    expect(stream.usage?.total_tokens).toBeGreaterThan(0);

    const withTools = await client.chat.completions.create({
      model,
      messages: [{ role: "user", content: "Weather?" }],
      tools,
    });
    expect(withTools.choices[0]!.finish_reason).toBe("tool_calls");

    const embedding = await client.embeddings.create({ model: "amazon.titan-embed-text-v2:0", input: "hello" });
    expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
  });
});

describe("azure openai", () => {
  it("deployment URL with api-version and the api-key header; streaming and embeddings", async () => {
    const mock = await startAzureMock({ apiKey: "azure-key", chunkDelayMs: 2 });
    mocks.push(mock);
    const client = clientFor(
      {
        "x-gateway-provider": "azure-openai",
        "x-gateway-custom-host": mock.url,
        "x-gateway-azure-deployment-id": "my-gpt4o",
        "x-gateway-azure-api-version": "2024-10-21",
      },
      "azure-key",
    );
    const answer = await client.chat.completions.create({
      model: "gpt-4o",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    const sent = mock.requests.at(-1)!;
    expect(sent.path).toBe("/openai/deployments/my-gpt4o/chat/completions?api-version=2024-10-21");
    expect(sent.headers["api-key"]).toBe("azure-key");
    expect(sent.headers.authorization).toBeUndefined();
    const stream = await collectStream(
      await client.chat.completions.create({
        model: "gpt-4o",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      }),
    );
    expect(stream.text.length).toBeGreaterThan(0);
    const embedding = await client.embeddings.create({ model: "text-embedding-3-small", input: "hi" });
    expect(embedding.data.length).toBe(1);
  });
});

describe("cohere", () => {
  it("chat v2, streaming, tools and embed", async () => {
    const mock = await startCohereMock({ apiKey: "co-key", chunkDelayMs: 2 });
    mocks.push(mock);
    const client = clientFor({ "x-gateway-provider": "cohere", "x-gateway-custom-host": mock.url }, "co-key");
    const answer = await client.chat.completions.create({
      model: "command-r-plus",
      messages: [{ role: "user", content: "Hi" }],
    });
    expect(answer.choices[0]!.message.content).toBeTruthy();
    expect(mock.requests.at(-1)!.path).toBe("/v2/chat");
    const stream = await collectStream(
      await client.chat.completions.create({
        model: "command-r-plus",
        messages: [{ role: "user", content: "Hi" }],
        stream: true,
      }),
    );
    expect(stream.text.length).toBeGreaterThan(0);
    const withTools = await client.chat.completions.create({
      model: "command-r-plus",
      messages: [{ role: "user", content: "Weather?" }],
      tools,
    });
    expect(withTools.choices[0]!.finish_reason).toBe("tool_calls");
    const embedding = await client.embeddings.create({ model: "embed-english-v3.0", input: ["a", "b"] });
    expect(embedding.data).toHaveLength(2);
    expect(mock.requests.at(-1)!.json()).toMatchObject({ texts: ["a", "b"], input_type: "search_document" });
  });
});

describe("openai-compatible table", () => {
  it.each(["groq", "mistral-ai", "together-ai", "deepseek", "ollama", "vllm"])(
    "%s: chat and streaming through the row's quirks",
    async (provider) => {
      const mock = await startOpenAIMock({ chunkDelayMs: 1 });
      mocks.push(mock);
      const client = clientFor({ "x-gateway-provider": provider, "x-gateway-custom-host": `${mock.url}/v1` });
      const answer = await client.chat.completions.create({
        model: "some-model",
        messages: [{ role: "user", content: "Hi" }],
        seed: 7,
      });
      expect(answer.choices[0]!.message.content).toBeTruthy();
      const sent = mock.requests.at(-1)!.json();
      if (provider === "mistral-ai") expect(sent).toMatchObject({ random_seed: 7 });
      else expect(sent).toMatchObject({ seed: 7 });
      const stream = await collectStream(
        await client.chat.completions.create({
          model: "some-model",
          messages: [{ role: "user", content: "Hi" }],
          stream: true,
        }),
      );
      expect(stream.text.length).toBeGreaterThan(0);
    },
  );
});

import Anthropic from "@anthropic-ai/sdk";
import { Portkey } from "portkey-ai";
import { describe, expect, it } from "vitest";
import { startAnthropicMock } from "../../mocks/anthropic.ts";
import { startAzureMock } from "../../mocks/azure.ts";
import { startBedrockMock } from "../../mocks/bedrock.ts";
import { startCohereMock } from "../../mocks/cohere.ts";
import { startGoogleMock } from "../../mocks/google.ts";
import { createTestServiceAccount, startVertexMock } from "../../mocks/vertex.ts";
import type { SuiteContext } from "./context.ts";

/** The end-to-end suite (index.ts): every provider family, and the inbound formats. */
export function describeProviders(suite: SuiteContext): void {
  const { clientFor, chatBoth, messages, mocks } = suite;
  describe("every provider family", () => {
    it("OpenAI and a row of the OpenAI-compatible table", async () => {
      for (const provider of ["openai", "groq"]) {
        const result = await chatBoth(
          clientFor({ "x-gateway-provider": provider, "x-gateway-custom-host": `${suite.openai.url}/v1` }),
          "gpt-4o-mini",
        );
        expect(result.text, provider).toBeTruthy();
        expect(result.streamed, provider).toBeTruthy();
      }
    });

    it("Anthropic", async () => {
      const mock = await startAnthropicMock();
      mocks.push(mock);
      const result = await chatBoth(
        clientFor({ "x-gateway-provider": "anthropic", "x-gateway-custom-host": mock.url }),
        "claude-sonnet-4-5",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Bedrock: Converse, ConverseStream and embeddings with a verified SigV4 signature", async () => {
      const credentials = { accessKeyId: "AKIDBUNDLE", secretAccessKey: "bundle-secret-key" };
      const mock = await startBedrockMock({ credentials });
      mocks.push(mock);
      const client = clientFor({
        "x-gateway-provider": "bedrock",
        "x-gateway-custom-host": mock.url,
        "x-gateway-aws-access-key-id": credentials.accessKeyId,
        "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
        "x-gateway-aws-region": "us-east-1",
      });
      const result = await chatBoth(client, "anthropic.claude-3-5-sonnet-20240620-v1:0");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
      const embedding = await client.embeddings.create({ model: "amazon.titan-embed-text-v2:0", input: "hello" });
      expect(embedding.data[0]!.embedding.length).toBeGreaterThan(0);
    });

    it("Google Gemini", async () => {
      const mock = await startGoogleMock({ apiKey: "provider-key" });
      mocks.push(mock);
      const result = await chatBoth(
        clientFor({ "x-gateway-provider": "google", "x-gateway-custom-host": mock.url }),
        "gemini-2.5-flash",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Vertex AI (service-account token exchange)", async () => {
      const mock = await startVertexMock();
      mocks.push(mock);
      const account = await createTestServiceAccount(mock.tokenUri);
      const result = await chatBoth(
        clientFor({
          "x-gateway-provider": "vertex-ai",
          "x-gateway-custom-host": mock.url,
          "x-gateway-vertex-region": "us-central1",
          "x-gateway-vertex-service-account-json": account.json,
        }),
        "gemini-2.5-pro",
      );
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Cohere", async () => {
      const mock = await startCohereMock({ apiKey: "co-key" });
      mocks.push(mock);
      const client = clientFor({ "x-gateway-provider": "cohere", "x-gateway-custom-host": mock.url }, "co-key");
      const result = await chatBoth(client, "command-r-plus");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("Azure OpenAI", async () => {
      const mock = await startAzureMock({ apiKey: "azure-key" });
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
      const result = await chatBoth(client, "gpt-4o");
      expect(result.text).toBeTruthy();
      expect(result.streamed).toBeTruthy();
    });

    it("the portkey-ai SDK with its own headers", async () => {
      const portkey = new Portkey({
        apiKey: suite.gateway.adminKey,
        baseURL: `${suite.gateway.url}/v1`,
        provider: "openai",
        customHost: `${suite.openai.url}/v1`,
        Authorization: "Bearer provider-key",
      });
      const answer = (await portkey.chat.completions.create({ model: "gpt-4o-mini", messages })) as any;
      expect(answer.choices[0].message.content).toBeTruthy();
      expect(suite.openai.requests.at(-1)!.headers.authorization).toBe("Bearer provider-key");
    });
  });
  describe("inbound formats (loaded on first use)", () => {
    it("Responses natively on OpenAI and through the chat adapter on Bedrock: create, retrieve and chain at once, stream", async () => {
      const credentials = { accessKeyId: "AKIDBUNDLE", secretAccessKey: "bundle-secret-key" };
      const bedrock = await startBedrockMock({ credentials });
      mocks.push(bedrock);
      const targets = [
        {
          model: "gpt-4o-mini",
          client: clientFor({ "x-gateway-provider": "openai", "x-gateway-custom-host": `${suite.openai.url}/v1` }),
        },
        {
          model: "anthropic.claude-3-5-sonnet-20240620-v1:0",
          client: clientFor({
            "x-gateway-provider": "bedrock",
            "x-gateway-custom-host": bedrock.url,
            "x-gateway-aws-access-key-id": credentials.accessKeyId,
            "x-gateway-aws-secret-access-key": credentials.secretAccessKey,
            "x-gateway-aws-region": "us-east-1",
          }),
        },
      ];
      for (const { model, client } of targets) {
        const first = await client.responses.create({ model, input: "Hi" });
        expect(first.output_text, model).toBeTruthy();
        expect(first.usage?.total_tokens, model).toBeGreaterThan(0);
        // Stored before the answer ended: readable at once, and chained at once below.
        expect((await client.responses.retrieve(first.id)).id).toBe(first.id);
        let streamed = "";
        const stream = await client.responses.create({
          model,
          input: "Again",
          previous_response_id: first.id,
          stream: true,
        });
        for await (const event of stream) if (event.type === "response.output_text.delta") streamed += event.delta;
        expect(streamed, model).toBeTruthy();
      }
    });

    it("Anthropic Messages with @anthropic-ai/sdk: native on Anthropic, translated on an OpenAI-compatible provider", async () => {
      const mock = await startAnthropicMock();
      mocks.push(mock);
      const targets = [
        {
          model: "claude-3-5-sonnet-20241022",
          headers: { "x-gateway-provider": "anthropic", "x-gateway-custom-host": mock.url },
        },
        {
          model: "gpt-4o-mini",
          headers: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${suite.openai.url}/v1` },
        },
      ];
      for (const { model, headers } of targets) {
        const client = new Anthropic({
          apiKey: "provider-key",
          baseURL: suite.gateway.url,
          defaultHeaders: { "x-gateway-api-key": suite.gateway.adminKey, ...headers },
          maxRetries: 0,
        });
        const message = await client.messages.create({ model, max_tokens: 64, messages });
        expect(message.content[0]?.type, model).toBe("text");
        const final = await client.messages.stream({ model, max_tokens: 64, messages }).finalMessage();
        expect(final.stop_reason, model).toBe("end_turn");
        expect((await client.messages.countTokens({ model, messages })).input_tokens, model).toBeGreaterThan(0);
      }
    });
  });
}

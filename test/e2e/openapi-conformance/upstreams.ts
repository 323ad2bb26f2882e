import { readFileSync } from "node:fs";
import { type MockServer, sendJson, startMockServer } from "../../helpers/mock-server.ts";
import { startAnthropicBatchesMock } from "../../mocks/anthropic-batches.ts";
import { startAnthropicMock } from "../../mocks/anthropic.ts";
import { startAzureMock } from "../../mocks/azure.ts";
import { startBedrockBatchesMock } from "../../mocks/bedrock-batches.ts";
import { startBedrockMock } from "../../mocks/bedrock.ts";
import { startCohereMock } from "../../mocks/cohere.ts";
import { startGoogleMock } from "../../mocks/google.ts";
import { startOpenAIBatchesMock } from "../../mocks/openai-batches.ts";
import { startOpenAIMock } from "../../mocks/openai.ts";
import { startVertexBatchesMock } from "../../mocks/vertex-batches.ts";
import { createTestServiceAccount, startVertexMock } from "../../mocks/vertex.ts";

/**
 * The upstreams of the OpenAPI conformance suite: one mock per provider, each speaking its provider's documented
 * wire format, and how a client reaches each through the gateway (its key and routing headers). The batch APIs
 * have mocks of their own (a provider's batch API and its inference API are different hosts here).
 */

/** How a client routes to one upstream through the gateway. */
export interface Routing {
  /** The provider key the client sends as `Authorization` (what the mock expects). */
  apiKey: string;
  headers: Record<string, string>;
}

export interface Upstreams {
  routing: Record<UpstreamName, Routing>;
  /** How many requests an upstream has received (a target whose upstream heard nothing was not measured). */
  requestsTo(name: UpstreamName): number;
  close(): Promise<void>;
}

export type UpstreamName =
  | "openai"
  | "anthropic"
  | "google"
  | "vertex-ai"
  | "bedrock"
  | "cohere"
  | "azure-openai"
  | "mistral-ai"
  | "openai batches"
  | "azure-openai batches"
  | "anthropic batches"
  | "bedrock batches"
  | "vertex-ai batches";

const AWS = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const awsHeaders = (host: string) => ({
  "x-gateway-provider": "bedrock",
  "x-gateway-custom-host": host,
  "x-gateway-aws-access-key-id": AWS.accessKeyId,
  "x-gateway-aws-secret-access-key": AWS.secretAccessKey,
  "x-gateway-aws-region": "us-east-1",
});
const azureHeaders = (host: string, deployment: string) => ({
  "x-gateway-provider": "azure-openai",
  "x-gateway-custom-host": host,
  "x-gateway-azure-deployment-id": deployment,
  "x-gateway-azure-api-version": "2024-10-21",
});

/** Mistral's moderation answer as its API reference documents it (test/fixtures/mistral). */
const mistralModeration = () =>
  JSON.parse(readFileSync(new URL("../../fixtures/mistral/moderation-response.json", import.meta.url), "utf8"));

export async function startUpstreams(): Promise<Upstreams> {
  const mocks: MockServer[] = [];
  const started = async <T extends MockServer>(mock: Promise<T>): Promise<T> => {
    const server = await mock;
    mocks.push(server);
    return server;
  };
  const [openai, anthropic, google, vertex, bedrock, cohere, azure, mistral] = await Promise.all([
    started(startOpenAIMock({ reply: "Hello there friend.", toolArguments: { city: "Paris" } })),
    started(startAnthropicMock({ delayMs: 1 })),
    started(startGoogleMock({ apiKey: "google-key", streamDelayMs: 1 })),
    started(startVertexMock({ streamDelayMs: 1 })),
    started(startBedrockMock({ credentials: AWS })),
    started(startCohereMock({ apiKey: "cohere-key", chunkDelayMs: 1 })),
    started(startAzureMock({ apiKey: "azure-key", chunkDelayMs: 1 })),
    started(startMistralModerationMock()),
  ]);
  const [openaiBatches, azureBatches, anthropicBatches, bedrockBatches, vertexBatches] = await Promise.all([
    started(startOpenAIBatchesMock({ apiKey: "openai-batch-key" })),
    started(startOpenAIBatchesMock({ apiKey: "azure-batch-key", azure: true, deployments: ["gpt-4o-mini"] })),
    started(startAnthropicBatchesMock()),
    started(startBedrockBatchesMock({ pollsToEnd: 2 })),
    started(startVertexBatchesMock({ pollsToEnd: 2 })),
  ]);
  const account = await createTestServiceAccount(vertex.tokenUri);
  const routing: Record<UpstreamName, Routing> = {
    openai: {
      apiKey: "openai-key",
      headers: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${openai.url}/v1` },
    },
    anthropic: {
      apiKey: "anthropic-key",
      headers: { "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropic.url },
    },
    google: { apiKey: "google-key", headers: { "x-gateway-provider": "google", "x-gateway-custom-host": google.url } },
    "vertex-ai": {
      apiKey: "unused",
      headers: {
        "x-gateway-provider": "vertex-ai",
        "x-gateway-custom-host": vertex.url,
        "x-gateway-vertex-region": "us-central1",
        "x-gateway-vertex-service-account-json": account.json,
      },
    },
    bedrock: { apiKey: "unused", headers: awsHeaders(bedrock.url) },
    cohere: { apiKey: "cohere-key", headers: { "x-gateway-provider": "cohere", "x-gateway-custom-host": cohere.url } },
    "azure-openai": { apiKey: "azure-key", headers: azureHeaders(azure.url, "my-gpt4o") },
    "mistral-ai": {
      apiKey: "mistral-key",
      headers: { "x-gateway-provider": "mistral-ai", "x-gateway-custom-host": `${mistral.url}/v1` },
    },
    "openai batches": {
      apiKey: "openai-batch-key",
      headers: { "x-gateway-provider": "openai", "x-gateway-custom-host": `${openaiBatches.url}/v1` },
    },
    "azure-openai batches": { apiKey: "azure-batch-key", headers: azureHeaders(azureBatches.url, "gpt-4o-mini") },
    "anthropic batches": {
      apiKey: "anthropic-batch-key",
      headers: { "x-gateway-provider": "anthropic", "x-gateway-custom-host": anthropicBatches.url },
    },
    "bedrock batches": {
      apiKey: "unused",
      headers: {
        ...awsHeaders(bedrockBatches.url),
        "x-gateway-aws-s3-bucket": "openapi-conformance",
        "x-gateway-aws-role-arn": "arn:aws:iam::123456789012:role/BedrockBatch",
      },
    },
    "vertex-ai batches": {
      apiKey: vertexBatches.accessToken,
      headers: {
        "x-gateway-provider": "vertex-ai",
        "x-gateway-custom-host": vertexBatches.url,
        "x-gateway-vertex-project-id": "openapi-project",
        "x-gateway-vertex-region": "us-east1",
        "x-gateway-vertex-storage-bucket": "openapi-conformance",
      },
    },
  };
  const servers: Record<UpstreamName, MockServer> = {
    openai,
    anthropic,
    google,
    "vertex-ai": vertex,
    bedrock,
    cohere,
    "azure-openai": azure,
    "mistral-ai": mistral,
    "openai batches": openaiBatches,
    "azure-openai batches": azureBatches,
    "anthropic batches": anthropicBatches,
    "bedrock batches": bedrockBatches,
    "vertex-ai batches": vertexBatches,
  };
  return {
    routing,
    requestsTo: (name) => servers[name].requests.length,
    close: async () => void (await Promise.all(mocks.map((mock) => mock.close()))),
  };
}

/** Mistral's `POST /v1/moderations`, with its bearer key required. */
function startMistralModerationMock(): Promise<MockServer> {
  return startMockServer((request, response) => {
    if (request.headers.authorization !== "Bearer mistral-key") {
      return sendJson(response, 401, { message: "Unauthorized", request_id: "mock" });
    }
    if (request.method === "POST" && request.path === "/v1/moderations") {
      return sendJson(response, 200, mistralModeration());
    }
    sendJson(response, 404, { message: `no mock for ${request.path}` });
  });
}

import { exportPKCS8, exportSPKI, generateKeyPair } from "jose";
import { type MockServer, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";
import { anthropicAnswerFor, streamOf } from "./anthropic.ts";
import { answerGemini, type GeminiMockOptions } from "./google.ts";

/**
 * A mock Vertex AI for e2e tests: the OAuth token endpoint and the Vertex model paths on one server.
 *   POST /token  (grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer, assertion=<JWT>) -> {access_token, expires_in}
 *   POST /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:generateContent | :streamGenerateContent?alt=sse
 *   POST /v1/projects/{p}/locations/{r}/publishers/google/models/{m}:predict           (embeddings)
 *   POST /v1/projects/{p}/locations/{r}/publishers/anthropic/models/{m}:rawPredict | :streamRawPredict
 * Model calls need `Authorization: Bearer <accessToken>` (401 UNAUTHENTICATED otherwise); an
 * `X-Vertex-AI-LLM-Request-Type` other than `dedicated` / `shared` answers 400.
 * Point the gateway at it with `x-gateway-custom-host: <mock.url>` and a service account from
 * `createTestServiceAccount(mock.tokenUri)`. The token_uri host (127.0.0.1) must be listed in
 * process.env.TRUSTED_CUSTOM_HOSTS of the process that runs the adapter.
 */

export interface VertexMockOptions extends GeminiMockOptions {
  /** Token the token endpoint hands out and the model paths expect (default "ya29.mock-vertex-token"). */
  accessToken?: string;
}

export interface VertexMock extends MockServer {
  tokenUri: string;
  accessToken: string;
  /** Requests that reached the token endpoint. */
  tokenRequests(): number;
}

export interface TestServiceAccount {
  json: string;
  clientEmail: string;
  publicKeyPem: string;
}

/** A service account key with a fresh RSA key pair, as the Google Cloud console exports it. */
export async function createTestServiceAccount(
  tokenUri: string,
  projectId = "mock-project",
  clientEmail = "gateway-test@mock-project.iam.gserviceaccount.com",
): Promise<TestServiceAccount> {
  const { privateKey, publicKey } = await generateKeyPair("RS256", { extractable: true });
  const json = JSON.stringify({
    type: "service_account",
    project_id: projectId,
    private_key_id: "test-key-id",
    private_key: await exportPKCS8(privateKey),
    client_email: clientEmail,
    client_id: "1234567890",
    auth_uri: "https://accounts.google.com/o/oauth2/auth",
    token_uri: tokenUri,
  });
  return { json, clientEmail, publicKeyPem: await exportSPKI(publicKey) };
}

export async function startVertexMock(options: VertexMockOptions = {}): Promise<VertexMock> {
  const accessToken = options.accessToken ?? "ya29.mock-vertex-token";
  let tokenCount = 0;
  const server = await startMockServer(async (request, res) => {
    const [path] = request.path.split("?");
    if (path === "/token" && request.method === "POST") {
      tokenCount++;
      const form = new URLSearchParams(request.body.toString("utf8"));
      if (form.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer" || !form.get("assertion")) {
        return sendJson(res, 400, { error: "invalid_grant", error_description: "Invalid grant" });
      }
      return sendJson(res, 200, { access_token: accessToken, expires_in: 3599, token_type: "Bearer" });
    }
    if (request.headers.authorization !== `Bearer ${accessToken}`) {
      return sendJson(res, 401, {
        error: { code: 401, message: "Request had invalid authentication credentials.", status: "UNAUTHENTICATED" },
      });
    }
    // Provisioned Throughput's switch takes `dedicated` or `shared` (Google's "Use Provisioned Throughput" page).
    const requestType = request.headers["x-vertex-ai-llm-request-type"];
    if (requestType !== undefined && requestType !== "dedicated" && requestType !== "shared") {
      return sendJson(res, 400, {
        error: {
          code: 400,
          message: `Invalid X-Vertex-AI-LLM-Request-Type ${requestType}`,
          status: "INVALID_ARGUMENT",
        },
      });
    }
    const match =
      /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/(google|anthropic)\/models\/([^:/]+):(\w+)$/.exec(path);
    if (!match) {
      return sendJson(res, 404, { error: { code: 404, message: `No mock route for ${path}`, status: "NOT_FOUND" } });
    }
    const [, publisher, model, method] = match;
    if (publisher === "anthropic") return answerAnthropic(request.json(), res, model, method, options);
    if (method === "predict") {
      const instances: any[] = request.json().instances ?? [];
      const dimensions = request.json().parameters?.outputDimensionality ?? 3;
      return sendJson(res, 200, {
        predictions: instances.map((instance, index) => ({
          embeddings: {
            values: Array.from({ length: dimensions }, (_, position) => (index + 1) / 10 + position / 100),
            statistics: { truncated: false, token_count: String(instance.content ?? "").split(/\s+/).length },
          },
        })),
      });
    }
    if (await answerGemini(request, res, path, options, model)) return;
    sendJson(res, 404, { error: { code: 404, message: `No mock method ${method}`, status: "NOT_FOUND" } });
  });
  return Object.assign(server, {
    tokenUri: `${server.url}/token`,
    accessToken,
    tokenRequests: () => tokenCount,
  });
}

async function answerAnthropic(
  body: any,
  res: import("node:http").ServerResponse,
  model: string,
  method: string,
  options: VertexMockOptions,
): Promise<void> {
  if (body.anthropic_version !== "vertex-2023-10-16" || "model" in body) {
    return sendJson(res, 400, {
      type: "error",
      error: {
        type: "invalid_request_error",
        message: "anthropic_version vertex-2023-10-16 required, model not allowed",
      },
    });
  }
  // Claude on Vertex answers Anthropic's Message and stream events as Anthropic does (the Anthropic mock's).
  const answer = anthropicAnswerFor({ ...body, model });
  const message = options.text
    ? { ...answer.message, content: [{ type: "text", text: options.text }], stop_reason: "end_turn" }
    : answer.message;
  if (method === "rawPredict") return sendJson(res, 200, message);
  await writeSse(res, options.text ? streamOf(message) : answer.events, options.streamDelayMs ?? 0);
}

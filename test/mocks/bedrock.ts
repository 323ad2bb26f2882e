import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import type { ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { Sha256 } from "@aws-crypto/sha256-js";
import { EventStreamCodec, type MessageHeaders } from "@smithy/eventstream-codec";
import { SignatureV4 } from "@smithy/signature-v4";
import { anthropicAnswerFor } from "./anthropic.ts";
import { fromUtf8, toUtf8 } from "@smithy/util-utf8";
import {
  type MockRoute,
  type MockServer,
  type RecordedRequest,
  sendJson,
  startMockServer,
} from "../helpers/mock-server.ts";

/**
 * A mock Bedrock runtime for end-to-end tests, answering from the wire-format fixtures in test/fixtures/bedrock.
 * Point the gateway at it with `x-gateway-provider: bedrock`, AWS key headers and `x-gateway-custom-host: <mock.url>`.
 *
 *   POST /model/{modelId}/converse         Converse JSON
 *   POST /model/{modelId}/converse-stream  real binary AWS event-stream frames, written in separate (and split) chunks
 *   POST /model/{modelId}/invoke           Titan / Cohere embeddings; Claude's Messages (anthropic_version)
 *   POST /model/{modelId}/invoke-with-response-stream   Claude's Messages stream (chunk events)
 *
 * Every request must carry a well-formed SigV4 Authorization header for service `bedrock` (or the configured
 * Bedrock API key as a bearer token); otherwise the mock answers 403 as AWS does. With `credentials` set, the
 * signature itself is recomputed and checked, which proves the gateway signed the exact bytes it sent.
 */

const FIXTURES = fileURLToPath(new URL("../fixtures/bedrock/", import.meta.url));

export type BedrockScenario = "auto" | "text" | "tool_use" | "reasoning" | "cache" | "throttled" | "validation";

/** One event of a stream fixture: `payload` is the JSON body of the frame. */
export interface BedrockStreamEvent {
  event: string;
  messageType?: "event" | "exception";
  payload: unknown;
}

export function readBedrockJson(name: string): any {
  return JSON.parse(readFileSync(`${FIXTURES}${name}`, "utf8"));
}

export function readBedrockStream(name: string): BedrockStreamEvent[] {
  return readBedrockJson(name);
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

/** Encodes one event as a binary AWS event-stream message, with the headers Bedrock sends. */
export function encodeBedrockEvent(event: BedrockStreamEvent): Uint8Array {
  const exception = event.messageType === "exception";
  const headers: MessageHeaders = {
    [exception ? ":exception-type" : ":event-type"]: { type: "string", value: event.event },
    ":content-type": { type: "string", value: "application/json" },
    ":message-type": { type: "string", value: exception ? "exception" : "event" },
  };
  return codec.encode({ headers, body: fromUtf8(JSON.stringify(event.payload)) });
}

export function encodeBedrockStream(events: BedrockStreamEvent[]): Uint8Array[] {
  return events.map(encodeBedrockEvent);
}

// ---------------------------------------------------------------------------------------------------------------
// SigV4 checks

export interface AwsTestCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/\s]+)\/(\d{8})\/([a-z0-9-]+)\/bedrock\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/;

export interface SigV4Check {
  ok: boolean;
  reason?: string;
  accessKeyId?: string;
  region?: string;
  signedHeaders?: string[];
}

/**
 * Checks a request's SigV4 Authorization header: shape, scope (service bedrock), signed headers (host and
 * x-amz-date, x-amz-security-token when present) and the date. With credentials, recomputes the signature
 * over the received method, path, query, signed headers and body bytes.
 */
export async function checkSigV4(
  request: Pick<RecordedRequest, "method" | "path" | "headers" | "body">,
  credentials?: AwsTestCredentials,
): Promise<SigV4Check> {
  const header = request.headers.authorization;
  const match = typeof header === "string" ? AUTHORIZATION.exec(header) : null;
  if (!match) return { ok: false, reason: "Authorization header is not AWS4-HMAC-SHA256 for service bedrock" };
  const [, accessKeyId, shortDate, region, signedList, signature] = match;
  const signedHeaders = signedList.split(";");
  const result = { accessKeyId, region, signedHeaders };
  const amzDate = request.headers["x-amz-date"];
  if (typeof amzDate !== "string" || !/^\d{8}T\d{6}Z$/.test(amzDate))
    return { ...result, ok: false, reason: "missing x-amz-date" };
  if (!amzDate.startsWith(shortDate))
    return { ...result, ok: false, reason: "credential date differs from x-amz-date" };
  for (const required of ["host", "x-amz-date"]) {
    if (!signedHeaders.includes(required)) return { ...result, ok: false, reason: `${required} is not signed` };
  }
  if (request.headers["x-amz-security-token"] !== undefined && !signedHeaders.includes("x-amz-security-token")) {
    return { ...result, ok: false, reason: "x-amz-security-token is not signed" };
  }
  if (!credentials) return { ...result, ok: true };

  if (accessKeyId !== credentials.accessKeyId) return { ...result, ok: false, reason: "unknown access key" };
  if (credentials.sessionToken && request.headers["x-amz-security-token"] !== credentials.sessionToken) {
    return { ...result, ok: false, reason: "wrong or missing session token" };
  }
  // The signer trusts a x-amz-content-sha256 header as the payload hash: check it against the bytes received.
  const contentHash = request.headers["x-amz-content-sha256"];
  if (contentHash !== undefined && contentHash !== createHash("sha256").update(request.body).digest("hex")) {
    return { ...result, ok: false, reason: "x-amz-content-sha256 does not match the body" };
  }
  const headers: Record<string, string> = {};
  for (const name of signedHeaders) {
    const value = request.headers[name];
    if (value === undefined) return { ...result, ok: false, reason: `signed header ${name} is missing` };
    headers[name] = Array.isArray(value) ? value.join(",") : value;
  }
  const [path, search = ""] = request.path.split("?");
  const query: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(search)) query[key] = value;
  const signer = new SignatureV4({
    service: "bedrock",
    region,
    sha256: Sha256,
    credentials,
    applyChecksum: false,
  });
  const signingDate = new Date(
    `${amzDate.slice(0, 4)}-${amzDate.slice(4, 6)}-${amzDate.slice(6, 8)}T${amzDate.slice(9, 11)}:${amzDate.slice(11, 13)}:${amzDate.slice(13, 15)}Z`,
  );
  const expected = await signer.sign(
    {
      method: request.method,
      protocol: "http:",
      hostname: headers.host ?? "",
      path,
      query,
      headers,
      body: new Uint8Array(request.body),
    },
    { signingDate },
  );
  const expectedSignature = /Signature=([0-9a-f]{64})/.exec(String(expected.headers.authorization))?.[1];
  if (expectedSignature !== signature) return { ...result, ok: false, reason: "signature does not match" };
  return { ...result, ok: true };
}

// ---------------------------------------------------------------------------------------------------------------
// Routes

function awsError(res: ServerResponse, status: number, exception: string, message: string): void {
  sendJson(
    res,
    status,
    { message },
    {
      "x-amzn-errortype": `${exception}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
      "x-amzn-requestid": "mock-request-id",
    },
  );
}

const CONVERSE_FIXTURES: Record<"text" | "tool_use" | "reasoning" | "cache", { json: string; stream: string }> = {
  text: { json: "converse-text.json", stream: "converse-stream-text.json" },
  tool_use: { json: "converse-tool-use.json", stream: "converse-stream-tool-use.json" },
  reasoning: { json: "converse-reasoning.json", stream: "converse-stream-reasoning.json" },
  cache: { json: "converse-cache-usage.json", stream: "converse-stream-text.json" },
};

function pick(scenario: BedrockScenario, body: any): Exclude<BedrockScenario, "auto"> {
  if (scenario !== "auto") return scenario;
  const last = body.messages?.[body.messages.length - 1];
  const answersTool = last?.content?.some((block: any) => block.toolResult);
  if (body.toolConfig?.tools?.length && !answersTool) return "tool_use";
  if (body.additionalModelRequestFields?.thinking) return "reasoning";
  return "text";
}

/** The checks Bedrock's Converse validation makes that a gateway bug could trip. */
function validateConverse(body: any): string | undefined {
  if (!Array.isArray(body?.messages) || body.messages.length === 0) return "messages must be a non-empty list";
  let hasToolBlocks = false;
  for (const [i, message] of body.messages.entries()) {
    if (message.role !== "user" && message.role !== "assistant") return `messages.${i}.role must be user or assistant`;
    if (i > 0 && body.messages[i - 1].role === message.role)
      return "A conversation must alternate between user and assistant roles.";
    if (!Array.isArray(message.content) || message.content.length === 0)
      return `messages.${i}.content must not be empty`;
    for (const block of message.content) {
      if ("text" in block && (typeof block.text !== "string" || !block.text))
        return "The text field in the ContentBlock object is blank.";
      if (block.toolUse || block.toolResult) hasToolBlocks = true;
    }
  }
  if (body.messages[0].role !== "user") return "A conversation must start with a user message.";
  if (hasToolBlocks && !body.toolConfig) {
    return "The toolConfig field must be defined when using toolUse and toolResult content blocks.";
  }
  return undefined;
}

async function writeEventStream(res: ServerResponse, frames: Uint8Array[], delayMs: number): Promise<void> {
  res.writeHead(200, { "content-type": "application/vnd.amazon.eventstream", "x-amzn-requestid": "mock-request-id" });
  const pause = () => new Promise((resolve) => (delayMs ? setTimeout(resolve, delayMs) : setImmediate(resolve)));
  for (const [i, frame] of frames.entries()) {
    // Every other frame is cut inside its prelude, so the client must reassemble frames across chunks.
    const cut = i % 2 === 1 ? Math.min(7, frame.byteLength - 1) : frame.byteLength;
    res.write(frame.subarray(0, cut));
    await pause();
    if (cut < frame.byteLength) {
      res.write(frame.subarray(cut));
      await pause();
    }
  }
  res.end();
}

function embeddingAnswer(modelId: string, body: any): { status: number; body: unknown; exception?: string } {
  if (/amazon\.titan-embed/.test(modelId)) {
    if (typeof body?.inputText !== "string")
      return { status: 400, exception: "ValidationException", body: "inputText is required" };
    const fixture = readBedrockJson("invoke-titan-embed-v2.json");
    return {
      status: 200,
      body: { ...fixture, inputTextTokenCount: Math.max(1, Math.ceil(body.inputText.length / 4)) },
    };
  }
  if (/cohere\.embed/.test(modelId)) {
    if (!Array.isArray(body?.texts) || typeof body.input_type !== "string") {
      return { status: 400, exception: "ValidationException", body: "texts and input_type are required" };
    }
    const fixture = readBedrockJson("invoke-cohere-embed.json");
    const embeddings = body.texts.map((_: string, i: number) => fixture.embeddings[i % fixture.embeddings.length]);
    return { status: 200, body: { ...fixture, embeddings, texts: body.texts } };
  }
  return {
    status: 400,
    exception: "ValidationException",
    body: `The provided model identifier is invalid: ${modelId}`,
  };
}

/**
 * The fields Bedrock's Claude InvokeModel takes (its "Anthropic Claude Messages API" parameters); any other is
 * refused as Bedrock refuses it ("Extra inputs are not permitted"), and so are `model` and `stream`, which the
 * path and the operation say.
 */
const CLAUDE_INVOKE_FIELDS = new Set([
  "anthropic_version",
  "anthropic_beta",
  "max_tokens",
  "system",
  "messages",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "tools",
  "tool_choice",
  "thinking",
  "metadata",
]);

/**
 * Claude on Bedrock (InvokeModel / InvokeModelWithResponseStream with `anthropic_version: bedrock-2023-05-31`):
 * Anthropic's Message as JSON, or each Anthropic stream event as a `chunk` event whose `bytes` are its JSON in
 * base64, Bedrock's invocation metrics added to the last.
 */
async function answerClaude(res: ServerResponse, body: any, operation: string, delayMs: number): Promise<void> {
  if (body.anthropic_version !== "bedrock-2023-05-31")
    return awsError(res, 400, "ValidationException", "invalid anthropic_version");
  const extra = Object.keys(body).find((key) => !CLAUDE_INVOKE_FIELDS.has(key));
  if (extra) return awsError(res, 400, "ValidationException", `${extra}: Extra inputs are not permitted`);
  if (!Array.isArray(body.messages) || typeof body.max_tokens !== "number")
    return awsError(res, 400, "ValidationException", "messages and max_tokens are required");
  const { message, events } = anthropicAnswerFor(body);
  const { model: _model, ...withoutModel } = message;
  if (operation === "invoke") return sendJson(res, 200, withoutModel, { "x-amzn-requestid": "mock-request-id" });
  const chunks: BedrockStreamEvent[] = events.map((event, i) => {
    const data = JSON.parse(event.data);
    if (i === events.length - 1) {
      data["amazon-bedrock-invocationMetrics"] = { inputTokenCount: 10, outputTokenCount: 20, invocationLatency: 100 };
    }
    return { event: "chunk", payload: { bytes: Buffer.from(JSON.stringify(data)).toString("base64") } };
  });
  return writeEventStream(res, encodeBedrockStream(chunks), delayMs);
}

export interface BedrockRouteOptions {
  scenario?: () => BedrockScenario;
  /** Pause between event-stream writes (default: one event-loop turn). */
  delayMs?: number;
  /** When set, SigV4 signatures are recomputed with these keys, not only checked for shape. */
  credentials?: AwsTestCredentials;
  /** Accepts `Authorization: Bearer <apiKey>` (Bedrock API keys). */
  apiKey?: string;
}

export function bedrockRoute(options: BedrockRouteOptions = {}): MockRoute {
  return async (request, res) => {
    const [path] = request.path.split("?");
    const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(path);
    if (request.method !== "POST" || !match)
      return awsError(res, 404, "UnknownOperationException", `${request.method} ${path} not found`);

    const bearer = request.headers.authorization?.startsWith("Bearer ");
    if (bearer && options.apiKey !== undefined) {
      if (request.headers.authorization !== `Bearer ${options.apiKey}`) {
        return awsError(
          res,
          403,
          "AccessDeniedException",
          "Invalid API Key format: Must start with pre-defined prefix",
        );
      }
    } else {
      const check = await checkSigV4(request, options.credentials);
      if (!check.ok) {
        const exception =
          check.reason === "signature does not match" ? "InvalidSignatureException" : "UnrecognizedClientException";
        return awsError(res, 403, exception, `SigV4 check failed: ${check.reason}`);
      }
    }
    if (!String(request.headers["content-type"] ?? "").startsWith("application/json")) {
      return awsError(res, 415, "UnsupportedMediaTypeException", "content-type must be application/json");
    }
    let body: any;
    try {
      body = request.json();
    } catch {
      return awsError(res, 400, "SerializationException", "request body is not valid JSON");
    }
    const modelId = decodeURIComponent(match[1]);
    const operation = match[2];

    if (body?.anthropic_version !== undefined) return answerClaude(res, body, operation, options.delayMs ?? 0);
    if (operation === "invoke") {
      const answer = embeddingAnswer(modelId, body);
      if (answer.exception) return awsError(res, answer.status, answer.exception, String(answer.body));
      return sendJson(res, answer.status, answer.body, { "x-amzn-bedrock-input-token-count": "6" });
    }

    const invalid = validateConverse(body);
    if (invalid) return awsError(res, 400, "ValidationException", invalid);
    const chosen = pick(options.scenario?.() ?? "auto", body);
    if (chosen === "validation") {
      const fixture = readBedrockJson("error-validation.json");
      return sendJson(res, fixture.status, fixture.body, fixture.headers);
    }
    if (chosen === "throttled") {
      if (operation === "converse") {
        const fixture = readBedrockJson("error-throttling.json");
        return sendJson(res, fixture.status, fixture.body, fixture.headers);
      }
      return writeEventStream(
        res,
        encodeBedrockStream(readBedrockStream("converse-stream-exception.json")),
        options.delayMs ?? 0,
      );
    }
    const fixture = CONVERSE_FIXTURES[chosen];
    if (operation === "converse")
      return sendJson(res, 200, readBedrockJson(fixture.json), { "x-amzn-requestid": "mock-request-id" });
    return writeEventStream(res, encodeBedrockStream(readBedrockStream(fixture.stream)), options.delayMs ?? 0);
  };
}

export interface BedrockMock extends MockServer {
  /** Fixes the answer for the next requests (`auto` restores the default choice). */
  setScenario(scenario: BedrockScenario): void;
}

/** Starts the mock Bedrock runtime on 127.0.0.1. */
export async function startBedrockMock(
  options: Omit<BedrockRouteOptions, "scenario"> & { scenario?: BedrockScenario } = {},
): Promise<BedrockMock> {
  let scenario = options.scenario ?? "auto";
  const server = await startMockServer(bedrockRoute({ ...options, scenario: () => scenario }));
  return Object.assign(server, {
    setScenario(next: BedrockScenario) {
      scenario = next;
    },
  });
}

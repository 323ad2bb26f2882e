import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";

/**
 * A mock Gemini API (generativelanguage.googleapis.com) for e2e tests: point the gateway at it with
 * `x-gateway-provider: google` and `x-gateway-custom-host: <mock.url>`.
 *   POST /v1beta/models/{model}:generateContent              -> one candidate with `text`
 *   POST /v1beta/models/{model}:streamGenerateContent?alt=sse -> `text` split into SSE events, usage in the last
 *   POST /v1beta/models/{model}:countTokens                  -> {totalTokens} (a quarter of the contents' JSON)
 *   POST /v1beta/models/{model}:batchEmbedContents           -> one vector per request (outputDimensionality or 4)
 *   GET  /v1beta/models                                      -> a short model list
 * With `apiKey` set, other keys get Google's 400 API_KEY_INVALID answer. When the request declares functions and
 * its last turn is a user text (not a function response), the answer is a call to the first function instead.
 */

export interface GeminiMockOptions {
  /** Expected `x-goog-api-key`; unset accepts any. */
  apiKey?: string;
  /** Answer text (default "Hello from mock Gemini"). */
  text?: string;
  /** Pause between stream events, to show streaming is not buffered. */
  streamDelayMs?: number;
  /** Streams only: after this many chunks, send Google's error object as the next event and stop. */
  streamFailAfter?: number;
}

/** The thought signature the mock attaches to its answers when thoughts are asked for (opaque bytes, base64). */
export const MOCK_THOUGHT_SIGNATURE = "CiQBcsjafE3u/+Yk2r9P1jV8wq0Ox4MockThoughtSignature==";

export const GEMINI_MOCK_USAGE = { promptTokenCount: 8, candidatesTokenCount: 5, totalTokenCount: 13 };

/** A GenerateContentResponse with one text candidate. */
export function geminiTextResponse(text: string, usage: object = GEMINI_MOCK_USAGE, model = "gemini-mock"): object {
  return {
    candidates: [{ content: { role: "model", parts: [{ text }] }, finishReason: "STOP", index: 0 }],
    usageMetadata: usage,
    modelVersion: model,
    responseId: "mock-response-id",
  };
}

/** Stream events for `text`: a few text pieces, the last with finishReason and full usage. */
export function geminiStreamEvents(text: string, usage: object = GEMINI_MOCK_USAGE, model = "gemini-mock"): object[] {
  const words = text.split(/(?<= )/);
  const pieces = words.length > 1 ? words : [text];
  return pieces.map((piece, position) => {
    const last = position === pieces.length - 1;
    return {
      candidates: [
        { content: { role: "model", parts: [{ text: piece }] }, index: 0, ...(last ? { finishReason: "STOP" } : {}) },
      ],
      usageMetadata: last ? usage : { promptTokenCount: (usage as any).promptTokenCount ?? 0 },
      modelVersion: model,
      responseId: "mock-response-id",
    };
  });
}

/**
 * Answer for a GenerateContentRequest: a function call when functions are declared and the user just spoke; with
 * `thinkingConfig.includeThoughts`, a thought summary first and the thought signature on the first answer part
 * (where Gemini puts it).
 */
export function geminiAnswerFor(request: any, text: string): { parts: any[]; finishReason: string } {
  const declarations = request?.tools?.flatMap((tool: any) => tool.functionDeclarations ?? []) ?? [];
  const lastTurn = request?.contents?.at(-1);
  const answeredFunction = lastTurn?.parts?.some((part: any) => part.functionResponse);
  const mode = request?.toolConfig?.functionCallingConfig?.mode;
  const thoughts = request?.generationConfig?.thinkingConfig?.includeThoughts === true;
  const withThought = (answer: any) =>
    thoughts
      ? [
          { text: "Thinking it over.", thought: true },
          { ...answer, thoughtSignature: MOCK_THOUGHT_SIGNATURE },
        ]
      : [answer];
  if (declarations.length > 0 && !answeredFunction && mode !== "NONE") {
    const allowed = request?.toolConfig?.functionCallingConfig?.allowedFunctionNames?.[0];
    const call = { functionCall: { name: allowed ?? declarations[0].name, args: { city: "Paris" } } };
    return { parts: withThought(call), finishReason: "STOP" };
  }
  return { parts: withThought({ text }), finishReason: "STOP" };
}

/** Handles a generateContent / streamGenerateContent / batchEmbedContents / models request; false if not one. */
export async function answerGemini(
  request: RecordedRequest,
  res: ServerResponse,
  path: string,
  options: GeminiMockOptions,
  model = "gemini-mock",
): Promise<boolean> {
  const text = options.text ?? "Hello from mock Gemini";
  if (request.method === "GET" && /\/models$/.test(path)) {
    sendJson(res, 200, {
      models: [
        { name: "models/gemini-2.5-flash", displayName: "Gemini 2.5 Flash" },
        { name: "models/gemini-embedding-001", displayName: "Gemini Embedding 001" },
      ],
    });
    return true;
  }
  const method = /:(\w+)$/.exec(path)?.[1];
  if (request.method !== "POST" || !method) return false;
  const body = request.json();
  if (method === "generateContent") {
    const { parts, finishReason } = geminiAnswerFor(body, text);
    sendJson(res, 200, {
      candidates: [{ content: { role: "model", parts }, finishReason, index: 0 }],
      usageMetadata: GEMINI_MOCK_USAGE,
      modelVersion: model,
      responseId: "mock-response-id",
    });
    return true;
  }
  if (method === "countTokens") {
    const contents = body.contents ?? body.generateContentRequest?.contents ?? [];
    sendJson(res, 200, { totalTokens: Math.max(1, Math.ceil(JSON.stringify(contents).length / 4)) });
    return true;
  }
  if (method === "streamGenerateContent") {
    if (!/[?&]alt=sse(&|$)/.test(request.path)) {
      sendJson(res, 400, {
        error: { code: 400, message: "the mock streams with alt=sse only", status: "INVALID_ARGUMENT" },
      });
      return true;
    }
    const { parts } = geminiAnswerFor(body, text);
    const whole = parts.some((part: any) => part.functionCall || part.thoughtSignature);
    const events = whole
      ? [
          {
            candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
            usageMetadata: GEMINI_MOCK_USAGE,
            modelVersion: model,
            responseId: "mock-response-id",
          },
        ]
      : geminiStreamEvents(text, GEMINI_MOCK_USAGE, model);
    const fail = options.streamFailAfter;
    const sent = fail === undefined ? events : events.slice(0, fail);
    const error = { error: { code: 503, message: "The model is overloaded.", status: "UNAVAILABLE" } };
    await writeSse(
      res,
      [...sent, ...(fail === undefined ? [] : [error])].map((data) => ({ data })),
      options.streamDelayMs ?? 0,
    );
    return true;
  }
  if (method === "batchEmbedContents") {
    const requests: any[] = body.requests ?? [];
    sendJson(res, 200, {
      embeddings: requests.map((item, index) => ({
        values: Array.from(
          { length: item.outputDimensionality ?? 4 },
          (_, position) => (index + 1) / 10 + position / 100,
        ),
      })),
    });
    return true;
  }
  return false;
}

export function googleApiKeyError(res: ServerResponse): void {
  sendJson(res, 400, {
    error: {
      code: 400,
      message: "API key not valid. Please pass a valid API key.",
      status: "INVALID_ARGUMENT",
      details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "API_KEY_INVALID" }],
    },
  });
}

export async function startGoogleMock(options: GeminiMockOptions = {}): Promise<MockServer> {
  return startMockServer(async (request, res) => {
    const path = request.path.split("?")[0];
    if (options.apiKey && request.headers["x-goog-api-key"] !== options.apiKey) return googleApiKeyError(res);
    const model = /\/models\/([^:/]+)/.exec(path)?.[1];
    if (path.startsWith("/v1beta/") && (await answerGemini(request, res, path, options, model))) return;
    sendJson(res, 404, {
      error: { code: 404, message: `No mock route for ${request.method} ${path}`, status: "NOT_FOUND" },
    });
  });
}

import type { ServerResponse } from "node:http";
import { type MockServer, type RecordedRequest, sendJson, startMockServer, writeSse } from "../helpers/mock-server.ts";

/**
 * A mock Gemini API (generativelanguage.googleapis.com) for e2e tests: point the gateway at it with
 * `x-gateway-provider: google` and `x-gateway-custom-host: <mock.url>`.
 *   POST /v1beta/models/{model}:generateContent              -> one candidate with `text`
 *   POST /v1beta/models/{model}:streamGenerateContent?alt=sse -> `text` split into SSE events, usage in the last
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
}

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

/** Answer for a GenerateContentRequest: a function call when functions are declared and the user just spoke. */
export function geminiAnswerFor(request: any, text: string): { parts: any[]; finishReason: string } {
  const declarations = request?.tools?.flatMap((tool: any) => tool.functionDeclarations ?? []) ?? [];
  const lastTurn = request?.contents?.at(-1);
  const answeredFunction = lastTurn?.parts?.some((part: any) => part.functionResponse);
  const mode = request?.toolConfig?.functionCallingConfig?.mode;
  if (declarations.length > 0 && !answeredFunction && mode !== "NONE") {
    const allowed = request?.toolConfig?.functionCallingConfig?.allowedFunctionNames?.[0];
    return { parts: [{ functionCall: { name: allowed ?? declarations[0].name, args: {} } }], finishReason: "STOP" };
  }
  return { parts: [{ text }], finishReason: "STOP" };
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
  if (method === "streamGenerateContent") {
    const { parts } = geminiAnswerFor(body, text);
    const events = parts[0].functionCall
      ? [
          {
            candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
            usageMetadata: GEMINI_MOCK_USAGE,
            modelVersion: model,
            responseId: "mock-response-id",
          },
        ]
      : geminiStreamEvents(text, GEMINI_MOCK_USAGE, model);
    await writeSse(
      res,
      events.map((data) => ({ data })),
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

import {
  createAnthropicStreamTransformer,
  createNativeMessagesStreamTransformer,
  fromAnthropicMessage,
  fromNativeMessage,
  toAnthropicMessagesRequest,
} from "../anthropic/index.ts";
import { createGeminiStreamTransformer, fromGeminiResponse, toGeminiRequest } from "../google/chat.ts";
import { type GeminiEndpoint, geminiCountTokensRequest, nativeGeminiRoute } from "../google/native-gemini.ts";
import { embeddingInputs, embeddingTaskType, rememberEncoding, toOpenAiEmbeddings } from "../google/embeddings.ts";
import {
  ANTHROPIC_HISTORY,
  GEMINI_HISTORY,
  type ProviderAdapter,
  type RouteAdapter,
  type TransformContext,
  type UpstreamRequest,
  UpstreamError,
} from "../types.ts";
import { hostValueProblem } from "../../security/host-values.ts";
import { joinUrl } from "../url.ts";
import { parseServiceAccount, vertexAccessToken } from "./auth.ts";
import { vertexPassthrough } from "./passthrough.ts";
import { vertexRegion } from "./region.ts";
import { vertexRequestTypeHeaders } from "./request-type.ts";
import { imagenRoutes } from "./images.ts";

/**
 * Vertex AI: Gemini models through the same generateContent bodies as the Gemini API (transforms shared with
 * ../google), Anthropic models through rawPredict with the Messages body (transforms shared with ../anthropic;
 * the `messages` route forwards a client's Messages body natively), embeddings through `:predict`. Auth is an
 * OAuth bearer token (see auth.ts). Imagen through `:predict` (images.ts).
 */

/** Body field Vertex AI wants instead of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

type Json = Record<string, any>;

export function isAnthropicModel(model: string): boolean {
  return model.startsWith("claude");
}

export function vertexProject(ctx: TransformContext): string {
  let project = ctx.target.vertex?.projectId?.trim();
  if (!project && ctx.target.vertex?.serviceAccountJson) {
    project = parseServiceAccount(ctx.target.vertex.serviceAccountJson).project_id;
  }
  if (!project) {
    throw new UpstreamError(
      400,
      "Vertex AI needs a project id (vertex project id or the service account's project_id)",
      {
        param: "vertex_project_id",
      },
    );
  }
  const problem = hostValueProblem("vertex_project_id", project);
  if (problem) throw new UpstreamError(400, `Invalid Vertex AI project id: ${problem}`, { param: "vertex_project_id" });
  return project;
}

/** `{base}/v1/projects/{project}/locations/{region}/publishers/{publisher}/models/{model}:{method}`. */
export function vertexModelUrl(ctx: TransformContext, publisher: string, method: string): string {
  const region = vertexRegion(ctx);
  const project = vertexProject(ctx);
  const model = ctx.model.replace(/^(publishers\/[^/]+\/)?models\//, "");
  if (!/^[\w.@-]+$/.test(model))
    throw new UpstreamError(400, `Invalid model name ${JSON.stringify(ctx.model)}`, { param: "model" });
  const host =
    region === "global" ? "https://aiplatform.googleapis.com" : `https://${region}-aiplatform.googleapis.com`;
  const base = (ctx.target.customHost ?? host).replace(/\/+$/, "");
  const versioned = /\/v1(beta1)?$/.test(base) ? base : `${base}/v1`;
  return joinUrl(
    versioned,
    `projects/${encodeURIComponent(project)}/locations/${region}/publishers/${publisher}/models/${model}:${method}`,
  );
}

async function vertexHeaders(ctx: TransformContext): Promise<Record<string, string>> {
  const token = await vertexAccessToken(ctx);
  return {
    authorization: `Bearer ${token}`,
    "content-type": "application/json",
    ...vertexRequestTypeHeaders(ctx.target),
    ...ctx.target.forwardHeaders,
  };
}

/** Vertex `:predict` embeddings body (one instance per input). */
export function toVertexEmbeddingRequest(body: Json): Json {
  const taskType = embeddingTaskType(body);
  const request: Json = {
    instances: embeddingInputs(body).map((content) => (taskType ? { content, task_type: taskType } : { content })),
  };
  if (typeof body.dimensions === "number") request.parameters = { outputDimensionality: body.dimensions };
  return request;
}

/** `{predictions: [{embeddings: {values, statistics: {token_count}}}]}` -> OpenAI embeddings list. */
export function fromVertexEmbeddingResponse(upstream: Json, ctx: TransformContext): Json {
  const predictions: Json[] = Array.isArray(upstream?.predictions) ? upstream.predictions : [];
  let tokens = 0;
  const vectors = predictions.map((prediction) => {
    const count = prediction?.embeddings?.statistics?.token_count;
    if (typeof count === "number") tokens += count;
    return Array.isArray(prediction?.embeddings?.values) ? prediction.embeddings.values : [];
  });
  return toOpenAiEmbeddings(vectors, ctx, tokens);
}

/** The Messages body for rawPredict: the model is in the URL, `anthropic_version` in the body. */
export function toVertexMessagesBody(body: Json, stream: boolean): Json {
  const { model: _model, stream: _stream, ...rest } = body;
  const payload: Json = { ...rest, anthropic_version: VERTEX_ANTHROPIC_VERSION };
  if (stream) payload.stream = true;
  return payload;
}

/** Anthropic's Messages natively on Claude models: rawPredict / streamRawPredict (SSE as Anthropic's). */
export const vertexMessagesRoute: RouteAdapter = {
  supportsModel: isAnthropicModel,
  async buildRequest(body, ctx) {
    return {
      url: vertexModelUrl(ctx, "anthropic", ctx.stream ? "streamRawPredict" : "rawPredict"),
      method: "POST",
      headers: await vertexHeaders(ctx),
      body: JSON.stringify(toVertexMessagesBody(body, ctx.stream)),
    };
  },
  transformResponse: (upstream) => fromNativeMessage(upstream, "Vertex AI"),
  stream: { framing: "sse", createTransformer: () => createNativeMessagesStreamTransformer("Vertex AI") },
};

/** Where a Gemini client's own body goes on Vertex AI: Gemini models only (Claude gets it translated via chat). */
const VERTEX_GEMINI: GeminiEndpoint = {
  url: (ctx, method) => vertexModelUrl(ctx, "google", method),
  headers: vertexHeaders,
  label: "Vertex AI",
  supportsModel: (model) => !isAnthropicModel(model),
};

/** Vertex AI's own token count of a Gemini client's :countTokens body (Gemini models; undefined for Claude). */
export async function vertexCountTokensRequest(
  body: Record<string, any>,
  ctx: TransformContext,
): Promise<UpstreamRequest | undefined> {
  return isAnthropicModel(ctx.model) ? undefined : geminiCountTokensRequest(VERTEX_GEMINI, body, ctx);
}

export const vertexAdapter: ProviderAdapter = {
  id: "vertex-ai",
  name: "Google Vertex AI",
  routes: {
    chat: {
      continuesAssistantTurn: true,
      keepsHistory: (model) => (isAnthropicModel(model) ? ANTHROPIC_HISTORY : GEMINI_HISTORY),
      async buildRequest(body, ctx) {
        if (isAnthropicModel(ctx.model)) {
          const payload = toAnthropicMessagesRequest(body, {
            stream: ctx.stream,
            anthropicVersion: VERTEX_ANTHROPIC_VERSION,
          });
          return {
            url: vertexModelUrl(ctx, "anthropic", ctx.stream ? "streamRawPredict" : "rawPredict"),
            method: "POST",
            headers: await vertexHeaders(ctx),
            body: JSON.stringify(payload),
          };
        }
        return {
          url: vertexModelUrl(ctx, "google", ctx.stream ? "streamGenerateContent?alt=sse" : "generateContent"),
          method: "POST",
          headers: await vertexHeaders(ctx),
          body: JSON.stringify(toGeminiRequest(body, ctx.model)),
        };
      },
      transformResponse: (upstream, ctx) =>
        isAnthropicModel(ctx.model) ? fromAnthropicMessage(upstream, ctx) : fromGeminiResponse(upstream, ctx),
      stream: {
        framing: "sse",
        createTransformer: (ctx) =>
          isAnthropicModel(ctx.model) ? createAnthropicStreamTransformer(ctx) : createGeminiStreamTransformer(ctx),
      },
    },
    embeddings: {
      async buildRequest(body, ctx) {
        rememberEncoding(ctx, body);
        return {
          url: vertexModelUrl(ctx, "google", "predict"),
          method: "POST",
          headers: await vertexHeaders(ctx),
          body: JSON.stringify(toVertexEmbeddingRequest(body)),
        };
      },
      transformResponse: fromVertexEmbeddingResponse,
    },
    messages: vertexMessagesRoute,
    // A Gemini client's own body, natively, to Gemini models (Claude on Vertex gets it translated through chat).
    gemini: nativeGeminiRoute(VERTEX_GEMINI),
    ...imagenRoutes(vertexModelUrl),
  },
  passthrough: vertexPassthrough,
};

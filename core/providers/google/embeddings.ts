import { type TransformContext, UpstreamError } from "../types.ts";

/**
 * OpenAI embeddings <-> Gemini `batchEmbedContents`, plus the OpenAI response builder Vertex AI's `:predict`
 * embeddings share.
 */

type Json = Record<string, any>;

/**
 * The client's `encoding_format` for a request, kept from buildRequest to transformResponse (a route's response
 * transform sees the upstream body and the context only). Entries go with their context.
 */
const ENCODINGS = new WeakMap<TransformContext, string>();

export function rememberEncoding(ctx: TransformContext, body: Json): void {
  if (typeof body.encoding_format === "string") ENCODINGS.set(ctx, body.encoding_format);
}

/** OpenAI `input` as a list of texts; token-id inputs have no Gemini equivalent. */
export function embeddingInputs(body: Json): string[] {
  const input = body.input;
  const inputs = typeof input === "string" ? [input] : Array.isArray(input) ? input : undefined;
  if (!inputs || inputs.length === 0 || !inputs.every((item) => typeof item === "string")) {
    throw new UpstreamError(400, "Google embeddings take `input` as a string or an array of strings (not token ids)", {
      param: "input",
    });
  }
  return inputs as string[];
}

/** Optional Gemini task type, sent through an OpenAI body as `task_type` (or `taskType`). */
export function embeddingTaskType(body: Json): string | undefined {
  const value = body.task_type ?? body.taskType;
  return typeof value === "string" ? value : undefined;
}

/** OpenAI embeddings body -> BatchEmbedContentsRequest. `modelName` is the `models/...` resource name. */
export function toBatchEmbedRequest(body: Json, modelName: string): Json {
  const taskType = embeddingTaskType(body);
  return {
    requests: embeddingInputs(body).map((text) => {
      const request: Json = { model: modelName, content: { parts: [{ text }] } };
      if (typeof body.dimensions === "number") request.outputDimensionality = body.dimensions;
      if (taskType) request.taskType = taskType;
      return request;
    }),
  };
}

/** BatchEmbedContentsResponse -> OpenAI embeddings list. */
export function fromBatchEmbedResponse(upstream: Json, ctx: TransformContext): Json {
  const embeddings: Json[] = Array.isArray(upstream?.embeddings) ? upstream.embeddings : [];
  const prompt = upstream?.usageMetadata?.promptTokenCount;
  return toOpenAiEmbeddings(
    embeddings.map((embedding) => (Array.isArray(embedding?.values) ? embedding.values : [])),
    ctx,
    typeof prompt === "number" ? prompt : 0,
  );
}

/** Vectors -> OpenAI `{object: "list", data, model, usage}`; token count 0 means unknown (the pipeline estimates). */
export function toOpenAiEmbeddings(vectors: number[][], ctx: TransformContext, promptTokens: number): Json {
  const base64 = ENCODINGS.get(ctx) === "base64";
  return {
    object: "list",
    data: vectors.map((vector, index) => ({
      object: "embedding",
      index,
      embedding: base64 ? Buffer.from(new Float32Array(vector).buffer).toString("base64") : vector,
    })),
    model: ctx.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

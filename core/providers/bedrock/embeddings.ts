import { type TransformContext, UpstreamError } from "../types.ts";

/**
 * OpenAI embeddings <-> Bedrock InvokeModel (POST /model/{modelId}/invoke) for the two embedding families:
 *
 * - Amazon Titan text embeddings (`amazon.titan-embed-text-*`): `{inputText, dimensions?, normalize?}` ->
 *   `{embedding, inputTextTokenCount}`. Titan embeds ONE text per call and the adapter contract sends one
 *   upstream request, so Titan accepts a single string (or a one-element array); more inputs are a 400.
 * - Cohere Embed on Bedrock (`cohere.embed-*`): `{texts, input_type, truncate?}` -> `{embeddings, texts, ...}`.
 *   `input_type` defaults to `search_document`. Bedrock reports Cohere token counts only in a response
 *   header, so usage is estimated from the echoed texts at ~4 characters per token (AWS's own rule of thumb).
 */

export type EmbeddingFamily = "titan" | "cohere";

export function embeddingFamily(modelId: string): EmbeddingFamily {
  if (/amazon\.titan-embed/.test(modelId)) return "titan";
  if (/cohere\.embed/.test(modelId)) return "cohere";
  throw new UpstreamError(
    400,
    `Bedrock embeddings support Amazon Titan text (amazon.titan-embed-text-*) and Cohere Embed (cohere.embed-*) models, not ${modelId}`,
    { param: "model", code: "unsupported_model" },
  );
}

/** The request's encoding_format, remembered per request for transformResponse (which only sees ctx). */
const encodings = new WeakMap<TransformContext, string>();

function inputTexts(input: unknown): string[] {
  if (typeof input === "string") return [input];
  if (Array.isArray(input) && input.every((item) => typeof item === "string")) return input as string[];
  throw new UpstreamError(400, "Bedrock embeddings accept a string or an array of strings (not token arrays)", {
    param: "input",
  });
}

export function toInvokeEmbeddingRequest(body: Record<string, any>, ctx: TransformContext): Record<string, any> {
  const modelId = ctx.model || body.model || "";
  const family = embeddingFamily(modelId);
  const texts = inputTexts(body.input);
  if (typeof body.encoding_format === "string") encodings.set(ctx, body.encoding_format);

  if (family === "titan") {
    if (texts.length !== 1) {
      throw new UpstreamError(
        400,
        `Amazon Titan embeddings take one input per request (got ${texts.length}); send one request per text or use a Cohere embed model`,
        { param: "input" },
      );
    }
    const out: Record<string, any> = { inputText: texts[0] };
    if (typeof body.dimensions === "number") out.dimensions = body.dimensions;
    if (typeof body.normalize === "boolean") out.normalize = body.normalize;
    return out;
  }

  const out: Record<string, any> = {
    texts,
    input_type: typeof body.input_type === "string" ? body.input_type : "search_document",
  };
  if (typeof body.truncate === "string") out.truncate = body.truncate;
  if (Array.isArray(body.embedding_types)) out.embedding_types = body.embedding_types;
  // Embed v4 can shorten its vectors; v3 has a fixed size and rejects the field.
  if (typeof body.dimensions === "number" && /cohere\.embed-v4/.test(modelId)) out.output_dimension = body.dimensions;
  return out;
}

export function fromInvokeEmbeddingResponse(upstream: any, ctx: TransformContext): object {
  const base64 = encodings.get(ctx) === "base64";
  const encode = (vector: number[]) => (base64 ? toBase64(vector) : vector);
  let vectors: number[][];
  let promptTokens: number;
  if (Array.isArray(upstream?.embedding)) {
    vectors = [upstream.embedding];
    promptTokens = Number(upstream.inputTextTokenCount ?? 0);
  } else if (upstream?.embeddings !== undefined) {
    // Cohere: a list of float vectors, or {float: [...], int8: [...]} when embedding_types was given.
    const embeddings = upstream.embeddings;
    vectors = Array.isArray(embeddings)
      ? embeddings
      : (embeddings?.float ?? (Object.values(embeddings ?? {})[0] as number[][] | undefined) ?? []);
    const texts: unknown[] = Array.isArray(upstream.texts) ? upstream.texts : [];
    promptTokens = texts.reduce<number>((sum, text) => sum + Math.ceil(String(text).length / 4), 0);
  } else {
    throw new UpstreamError(502, "Bedrock returned an embeddings response without embeddings", {
      type: "server_error",
      code: "bad_upstream_response",
    });
  }
  return {
    object: "list",
    data: vectors.map((vector, index) => ({ object: "embedding", index, embedding: encode(vector) })),
    model: ctx.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  };
}

/** OpenAI's base64 embedding encoding: little-endian float32 bytes. */
function toBase64(vector: number[]): string {
  const floats = new Float32Array(vector);
  const bytes = new Uint8Array(floats.buffer);
  // Float32Array uses platform byte order; OpenAI's format is little-endian (as are all platforms Node runs on).
  return Buffer.from(bytes).toString("base64");
}

import type { TransformContext } from "../types.ts";
import { UpstreamError } from "../types.ts";

/**
 * OpenAI embeddings body -> Cohere Embed v2 body (POST /v2/embed). `input_type` is Cohere's own field (v3+
 * models require it): the client may send it, else documents are assumed. `dimensions` -> `output_dimension`.
 */
export function toCohereEmbedRequest(body: Record<string, any>, ctx: Pick<TransformContext, "model">) {
  const input = body.input;
  const texts = typeof input === "string" ? [input] : input;
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((text) => typeof text !== "string")) {
    throw new UpstreamError(400, "cohere embeddings take a string or an array of strings as input", {
      param: "input",
      code: "invalid_input",
    });
  }
  const request: Record<string, unknown> = {
    model: body.model ?? ctx.model,
    texts,
    input_type: body.input_type ?? "search_document",
    embedding_types: ["float"],
  };
  if (body.dimensions != null) request.output_dimension = body.dimensions;
  if (body.truncate != null) request.truncate = body.truncate;
  return request;
}

/** Little-endian float32 bytes, base64: what OpenAI returns for `encoding_format: "base64"`. */
export function floatsToBase64(values: number[]): string {
  const bytes = new Uint8Array(values.length * 4);
  const view = new DataView(bytes.buffer);
  values.forEach((value, index) => {
    view.setFloat32(index * 4, value, true);
  });
  return Buffer.from(bytes).toString("base64");
}

/** Cohere Embed v2 response -> OpenAI embedding list. */
export function fromCohereEmbedResponse(
  upstream: any,
  ctx: Pick<TransformContext, "model">,
  encodingFormat?: string,
): object {
  const vectors: number[][] =
    upstream?.embeddings?.float ?? (Array.isArray(upstream?.embeddings) ? upstream.embeddings : []);
  const tokens = Number(upstream?.meta?.billed_units?.input_tokens ?? 0);
  return {
    object: "list",
    data: vectors.map((embedding, index) => ({
      object: "embedding",
      index,
      embedding: encodingFormat === "base64" ? floatsToBase64(embedding) : embedding,
    })),
    model: ctx.model,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
  };
}

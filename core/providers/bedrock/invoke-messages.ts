import { createNativeMessagesStreamTransformer, fromNativeMessage } from "../anthropic/index.ts";
import { type RouteAdapter, type TransformContext, type UpstreamEvent, UpstreamError } from "../types.ts";
import { streamException } from "./converse-stream.ts";
import { bedrockPost, bedrockUrl } from "./http.ts";

/**
 * Anthropic's Messages API natively on Bedrock's Claude models: InvokeModel (`POST /model/{id}/invoke`) and
 * InvokeModelWithResponseStream (`/invoke-with-response-stream`) take the Messages body with
 * `anthropic_version: "bedrock-2023-05-31"` and without `model` (it is in the path) or `stream` (the operation
 * says it). The answer is Anthropic's Message; the stream is AWS event-stream framing whose `chunk` events carry
 * `{"bytes": "<base64 of one Anthropic event JSON>"}`.
 */

export const BEDROCK_ANTHROPIC_VERSION = "bedrock-2023-05-31";

/**
 * Claude model ids, inference profiles (`us.anthropic.claude-...`, `global.anthropic.claude-...`) and ARNs that
 * name one (`.../foundation-model/anthropic.claude-...`, `.../inference-profile/eu.anthropic.claude-...`).
 * Application inference profiles do not name their model: they go through Converse.
 */
export function isBedrockAnthropicModel(model: string): boolean {
  return /(?:^|[./])anthropic\.claude/.test(model);
}

export function toBedrockMessagesBody(body: Record<string, any>, ctx: TransformContext): Record<string, any> {
  const { model: _model, stream: _stream, ...rest } = body;
  const payload: Record<string, any> = { ...rest, anthropic_version: BEDROCK_ANTHROPIC_VERSION };
  // Bedrock reads betas from the body's `anthropic_beta`, not from the `anthropic-beta` header.
  const beta = Object.entries(ctx.target.forwardHeaders ?? {}).find(
    ([name]) => name.toLowerCase() === "anthropic-beta",
  );
  if (beta && payload.anthropic_beta === undefined) {
    const betas = beta[1]
      .split(",")
      .map((value) => value.trim())
      .filter(Boolean);
    if (betas.length) payload.anthropic_beta = betas;
  }
  return payload;
}

/** The Anthropic event JSON of one event-stream message: exceptions throw, `chunk` payloads are unwrapped. */
export function bedrockChunkPayload(event: UpstreamEvent): string | undefined {
  if (event.messageType === "exception" || event.messageType === "error") throw streamException(event);
  if (event.event !== "chunk") return undefined;
  let bytes: unknown;
  try {
    bytes = JSON.parse(event.data)?.bytes;
  } catch {
    bytes = undefined;
  }
  if (typeof bytes !== "string") {
    throw new UpstreamError(502, "Bedrock sent a chunk event without bytes", {
      type: "server_error",
      code: "bad_upstream_stream",
    });
  }
  return Buffer.from(bytes, "base64").toString("utf8");
}

export const bedrockMessagesRoute: RouteAdapter = {
  supportsModel: isBedrockAnthropicModel,
  buildRequest(body, ctx) {
    const modelId = ctx.model || body.model;
    if (typeof modelId !== "string" || !modelId) {
      throw new UpstreamError(400, "model is required", { param: "model" });
    }
    const operation = ctx.stream ? "invoke-with-response-stream" : "invoke";
    return bedrockPost(ctx, bedrockUrl(ctx, modelId, operation), toBedrockMessagesBody(body, ctx));
  },
  transformResponse: (upstream) => fromNativeMessage(upstream, "Bedrock"),
  stream: {
    framing: "aws-eventstream",
    createTransformer: () => createNativeMessagesStreamTransformer("Bedrock", bedrockChunkPayload),
  },
};

import { type ProviderAdapter, type TransformContext, UpstreamError } from "../types.ts";
import { fromConverseResponse, toConverseRequest } from "./converse.ts";
import { createConverseStreamTransformer } from "./converse-stream.ts";
import { fromInvokeEmbeddingResponse, toInvokeEmbeddingRequest } from "./embeddings.ts";
import { mapBedrockError } from "./errors.ts";
import { bedrockImageRoutes } from "./images.ts";
import { bedrockPost, bedrockUrl } from "./http.ts";
import { bedrockMessagesRoute } from "./invoke-messages.ts";
import { bedrockPassthrough } from "./passthrough.ts";
import { bedrockRerankRoute } from "./rerank.ts";

/**
 * AWS Bedrock runtime: chat through Converse / ConverseStream (binary AWS event stream), Anthropic's Messages
 * natively for Claude models through InvokeModel / InvokeModelWithResponseStream (invoke-messages.ts),
 * embeddings through InvokeModel for Titan text and Cohere Embed models, images through InvokeModel (images.ts). Authentication: SigV4 with
 * ctx.target.aws, or a Bedrock API key as a bearer token. Region from ctx.target.aws.region (default us-east-1); ctx.target.customHost
 * replaces https://bedrock-runtime.{region}.amazonaws.com (VPC endpoints, proxies, mocks).
 */
export const bedrockAdapter: ProviderAdapter = {
  id: "bedrock",
  name: "AWS Bedrock",
  routes: {
    chat: {
      continuesAssistantTurn: true,
      buildRequest(body, ctx) {
        const modelId = modelOf(body, ctx);
        return bedrockPost(
          ctx,
          bedrockUrl(ctx, modelId, ctx.stream ? "converse-stream" : "converse"),
          toConverseRequest(body, ctx),
        );
      },
      transformResponse: fromConverseResponse,
      stream: { framing: "aws-eventstream", createTransformer: createConverseStreamTransformer },
    },
    embeddings: {
      buildRequest(body, ctx) {
        const modelId = modelOf(body, ctx);
        return bedrockPost(ctx, bedrockUrl(ctx, modelId, "invoke"), toInvokeEmbeddingRequest(body, ctx));
      },
      transformResponse: fromInvokeEmbeddingResponse,
    },
    messages: bedrockMessagesRoute,
    ...bedrockImageRoutes,
    rerank: bedrockRerankRoute,
  },
  mapError: mapBedrockError,
  passthrough: bedrockPassthrough,
};

function modelOf(body: Record<string, any>, ctx: TransformContext): string {
  const model = ctx.model || body.model;
  if (typeof model !== "string" || !model) throw new UpstreamError(400, "model is required", { param: "model" });
  return model;
}

import { readAnthropicClientHeaders } from "../../inference/formats/messages/client-headers.ts";
import type { Handler } from "../../http/context.ts";
import { HttpError } from "../../http/errors.ts";
import { type Schema, validate } from "../../http/json.ts";
import type { RouteKind } from "../../providers/types.ts";
import type { BatchEndpoint } from "./types.ts";

/**
 * What a batch line of each endpoint is: the route's own body schema (checked while the batch validates) and the
 * pipeline entry its route handler calls (what a line runs through in gateway mode: exactly the pipeline a client
 * request takes). Not the route handler modules themselves: each family's Lambda bundles only its own.
 * Both are loaded on first use, so the batches function loads only the formats its batches need.
 */
interface EndpointSpec {
  route: RouteKind;
  schema(): Promise<Schema>;
  handler(): Promise<Handler>;
}

const ENDPOINTS: Record<BatchEndpoint, EndpointSpec> = {
  "/v1/chat/completions": {
    route: "chat",
    schema: async () => (await import("../../inference/gateway/schemas/chat.ts")).chatCompletionRequest,
    handler: async () => {
      const [{ handleInference }, chat, { simpleChatRequest }] = await Promise.all([
        import("../../inference/gateway/inference.ts"),
        import("../../inference/gateway/schemas/chat.ts"),
        import("../../inference/gateway/schemas/simple-chat.ts"),
      ]);
      return (request, ctx) =>
        handleInference("chat", request, ctx, chat.chatCompletionRequest, chat.normaliseChatRequest, simpleChatRequest);
    },
  },
  "/v1/completions": {
    route: "completions",
    schema: async () => (await import("../../inference/gateway/schemas/completions.ts")).completionRequest,
    handler: async () => {
      const [{ handleInference }, { completionRequest }] = await Promise.all([
        import("../../inference/gateway/inference.ts"),
        import("../../inference/gateway/schemas/completions.ts"),
      ]);
      return (request, ctx) => handleInference("completions", request, ctx, completionRequest);
    },
  },
  "/v1/embeddings": {
    route: "embeddings",
    schema: async () => (await import("../../inference/gateway/schemas/embeddings.ts")).embeddingRequest,
    handler: async () => {
      const [{ handleInference }, { embeddingRequest }] = await Promise.all([
        import("../../inference/gateway/inference.ts"),
        import("../../inference/gateway/schemas/embeddings.ts"),
      ]);
      return (request, ctx) => handleInference("embeddings", request, ctx, embeddingRequest);
    },
  },
  "/v1/responses": {
    route: "responses",
    schema: async () => (await import("../../inference/formats/responses/schema.ts")).responsesRequest,
    handler: async () => (await import("../responses/create-response.ts")).createResponse,
  },
  "/v1/messages": {
    route: "messages",
    schema: async () => (await import("../../inference/formats/messages/schema.ts")).messagesRequest,
    handler: async () => {
      const [{ handleInference }, { messagesRequest }, { loadFormat }] = await Promise.all([
        import("../../inference/gateway/inference.ts"),
        import("../../inference/formats/messages/index.ts"),
        import("../../inference/formats/registry.ts"),
      ]);
      await loadFormat("messages");
      return (request, ctx) => {
        readAnthropicClientHeaders(request, ctx);
        return handleInference("messages", request, ctx, messagesRequest);
      };
    },
  },
};

export const endpointHandler = (endpoint: BatchEndpoint): Promise<Handler> => ENDPOINTS[endpoint].handler();

/** A body problem: the message and the param inside the body (e.g. `messages[0].role`). */
export interface BodyProblem {
  message: string;
  param: string | null;
}

/** Checks one line's body against its route's schema and what a batch cannot do (stream, run in background). */
export async function checkLineBody(endpoint: BatchEndpoint, body: unknown): Promise<BodyProblem | undefined> {
  const schema = await ENDPOINTS[endpoint].schema();
  try {
    validate(schema, body);
  } catch (error) {
    if (error instanceof HttpError) return { message: error.message, param: error.param };
    throw error;
  }
  const fields = body as Record<string, unknown>;
  if (fields.stream === true)
    return { message: "Streaming is not supported in a batch: leave 'stream' out.", param: "stream" };
  if (fields.background === true)
    return {
      message: "Background responses are not supported in a batch: leave 'background' out.",
      param: "background",
    };
  return undefined;
}

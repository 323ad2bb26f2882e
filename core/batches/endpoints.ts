import type { Handler } from "../http/context.ts";
import { HttpError } from "../http/errors.ts";
import { type Schema, validate } from "../http/json.ts";
import type { RouteKind } from "../providers/types.ts";
import type { BatchEndpoint } from "./types.ts";

/**
 * What a batch line of each endpoint is: the route's own body schema (checked while the batch validates) and the
 * route's own handler (what a line runs through in gateway mode: exactly the pipeline a client request takes).
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
    schema: async () => (await import("../gateway/schemas/chat.ts")).chatCompletionRequest,
    handler: async () => (await import("../routes/handlers/chat.ts")).handlers.chatCompletions!,
  },
  "/v1/completions": {
    route: "completions",
    schema: async () => (await import("../gateway/schemas/completions.ts")).completionRequest,
    handler: async () => (await import("../routes/handlers/completions.ts")).handlers.completions!,
  },
  "/v1/embeddings": {
    route: "embeddings",
    schema: async () => (await import("../gateway/schemas/embeddings.ts")).embeddingRequest,
    handler: async () => (await import("../routes/handlers/embeddings.ts")).handlers.embeddings!,
  },
  "/v1/responses": {
    route: "responses",
    schema: async () => (await import("../formats/responses/schema.ts")).responsesRequest,
    handler: async () => (await import("../responses/create-response.ts")).createResponse,
  },
  "/v1/messages": {
    route: "messages",
    schema: async () => (await import("../formats/messages/schema.ts")).messagesRequest,
    handler: async () => (await import("../routes/handlers/messages.ts")).handlers.createMessage!,
  },
};

export const routeOfEndpoint = (endpoint: BatchEndpoint): RouteKind => ENDPOINTS[endpoint].route;

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

import * as z from "zod/mini";

/**
 * The body of `POST /mcp/:server` as the OpenAPI document describes it: one JSON-RPC 2.0 message or a batch.
 * The SDK's transport validates the real thing (core/features/mcp/endpoint/endpoint.ts); this is the shape for readers.
 */
const jsonRpcMessage = z.looseObject({
  jsonrpc: z.literal("2.0"),
  id: z.optional(z.union([z.string(), z.number()])),
  method: z.optional(z.string()),
  params: z.optional(z.record(z.string(), z.unknown())),
  result: z.optional(z.unknown()),
  error: z.optional(z.looseObject({ code: z.number(), message: z.string() })),
});

export const mcpRequestBody = z.union([jsonRpcMessage, z.array(jsonRpcMessage)]);

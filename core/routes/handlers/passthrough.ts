import { handlePassthrough } from "../../inference/gateway/passthrough.ts";
import type { HandlerMap } from "../../http/context.ts";
import { RouteNotMatched } from "../../http/errors.ts";

/**
 * Paths of the gateway's own resources that providers share a prefix with: saved prompts (core/features/prompts), files, uploads,
 * batches and fine-tuning jobs (core/features/files, core/features/batches, core/features/fine-tuning), and the Assistants API's objects, recorded
 * per workspace (core/features/assistants). Such a request no dedicated route matched is answered 404/405 here, never forwarded
 * to a provider (which would look like success and bypass the workspace's own records). `/v1/proxy/...` still
 * forwards, as it always does.
 */
const GATEWAY_OWNED = /^\/v1\/(prompts|files|uploads|batches|fine_tuning|assistants|threads|vector_stores)(\/|$)/;

export const handlers: HandlerMap = {
  /** `/v1/proxy/*`: raw pass-through, even on paths with dedicated handling. */
  proxy: (request, ctx) => handlePassthrough(request, ctx, true),
  /** `/v1/*` catch-all: whatever no dedicated route handles. */
  passthrough: async (request, ctx) => {
    if (GATEWAY_OWNED.test(ctx.path ?? new URL(request.url).pathname)) throw new RouteNotMatched();
    return handlePassthrough(request, ctx, false);
  },
};

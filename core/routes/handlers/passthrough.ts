import { handlePassthrough } from "../../gateway/passthrough.ts";
import type { HandlerMap } from "../../http/context.ts";

export const handlers: HandlerMap = {
  /** `/v1/proxy/*`: raw pass-through, even on paths with dedicated handling. */
  proxy: (request, ctx) => handlePassthrough(request, ctx, true),
  /** `/v1/*` catch-all: whatever no dedicated route handles. */
  passthrough: (request, ctx) => handlePassthrough(request, ctx, false),
};

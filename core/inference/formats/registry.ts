import type { RouteKind } from "../../providers/types.ts";
import type { FormatRoute, InboundFormat } from "./types.ts";

/**
 * The inbound wire formats, each loaded on first use (a chat Lambda never compiles them). Once a route's
 * format is loaded, `loadedFormat` hands it out synchronously to the code that runs later in the same request
 * (guardrail texts, the stream pipeline, the cache).
 */
const LOADERS: Partial<Record<RouteKind, () => Promise<InboundFormat>>> = {
  responses: () => import("./responses/index.ts").then((module) => module.responsesFormat),
  messages: () => import("./messages/index.ts").then((module) => module.messagesFormat),
  gemini: () => import("./gemini/index.ts").then((module) => module.geminiFormat),
};

const LOADED = new Map<RouteKind, InboundFormat>();

/** Whether a route is an inbound format other than OpenAI's chat / completions / embeddings. */
export function isFormatRoute(route: string): route is FormatRoute {
  return route === "responses" || route === "messages" || route === "gemini";
}

/** The route's inbound format, loaded now if needed; undefined for the OpenAI-shaped routes. */
export async function loadFormat(route: RouteKind | "passthrough"): Promise<InboundFormat | undefined> {
  if (!isFormatRoute(route)) return undefined;
  const loaded = LOADED.get(route);
  if (loaded) return loaded;
  const format = await LOADERS[route]!();
  LOADED.set(route, format);
  return format;
}

/**
 * The route's format when the request already loaded it (its handler does, before anything else runs);
 * undefined for the OpenAI-shaped routes. Throws for a format route whose format was never loaded: a wiring bug.
 */
export function loadedFormat(route: RouteKind | "passthrough"): InboundFormat | undefined {
  if (!isFormatRoute(route)) return undefined;
  const format = LOADED.get(route);
  if (!format) throw new Error(`the ${route} format is used before it was loaded`);
  return format;
}

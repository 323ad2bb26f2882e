import type { RouteAdapter } from "../types.ts";
import { authHeaders, baseUrlOf, type CompatibleProvider } from "../openai/compatible.ts";
import { joinUrl } from "../url.ts";
import { loadOnce } from "../../util/load-once.ts";

type MistralModerations = typeof import("./moderations.ts");

/**
 * The mapping between OpenAI's and Mistral's moderation shapes (moderations.ts: the categories and their
 * counterparts) is loaded by the route's first request, once: the OpenAI-compatible table every inference function
 * loads at init carries only this route.
 */
const shapes = loadOnce<MistralModerations>(() => import("./moderations.ts"));

/** The `mistral-ai` row's moderations route (its other routes are OpenAI's). */
export function mistralModerationsRoute(row: CompatibleProvider): RouteAdapter {
  return {
    async buildRequest(body, ctx) {
      const { toMistralModerationRequest } = await shapes.get();
      return {
        url: joinUrl(baseUrlOf(row, ctx), "/moderations"),
        method: "POST",
        headers: {
          ...row.headers,
          ...authHeaders(row, ctx.target.apiKey),
          ...ctx.target.forwardHeaders,
          "content-type": "application/json",
        },
        body: JSON.stringify(toMistralModerationRequest(body)),
      };
    },
    // The answer of a request this route built: the shapes were loaded by buildRequest.
    transformResponse: (upstream) => shapes.loaded()!.fromMistralModerationResponse(upstream),
  };
}

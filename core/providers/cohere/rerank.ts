import type { RouteAdapter, TransformContext } from "../types.ts";
import { joinUrl } from "../url.ts";

/**
 * Cohere Rerank through its v1 endpoint (https://docs.cohere.com/v1/reference/rerank): v1 takes every field of
 * the gateway's rerank body as it is (`documents` as strings or objects, `rank_fields`, `return_documents`,
 * `max_chunks_per_doc`), where v2 dropped the last three. The answer, `{id, results: [{index, relevance_score,
 * document?}], meta: {billed_units: {search_units}}}`, is returned as received (spec 4.1); the family's meter
 * reads its search units.
 */
export function cohereRerankRoute(
  base: string,
  headers: (ctx: TransformContext) => Record<string, string>,
): RouteAdapter {
  return {
    buildRequest(body, ctx) {
      return {
        url: joinUrl(ctx.target.customHost ?? base, "/v1/rerank"),
        method: "POST",
        headers: headers(ctx),
        body: JSON.stringify(body),
      };
    },
    transformResponse: (upstream) => upstream,
  };
}

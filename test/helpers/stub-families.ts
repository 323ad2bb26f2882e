import type { HandlerMap } from "../../core/http/context.ts";
import { errorResponse, HttpError } from "../../core/http/errors.ts";
import { ROUTE_FAMILIES } from "../../core/routes/table.ts";

/**
 * Route families whose handler modules are not in ALL_HANDLERS yet (built on other branches) get handlers answering
 * 501, so the local gateway starts without them: `vi.mock` the handler index with this.
 */
export function withStubFamilies(handlers: Record<string, HandlerMap>): Record<string, HandlerMap> {
  const all = { ...handlers };
  for (const family of ROUTE_FAMILIES) {
    if (all[family.name]) continue;
    all[family.name] = Object.fromEntries(
      family.routes.map((route) => [
        route.handler,
        async () => errorResponse(new HttpError(501, `${family.name} is not built yet`, { code: "not_implemented" })),
      ]),
    );
  }
  return all;
}

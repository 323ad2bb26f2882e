import { ROUTE_FAMILIES } from "../../routes/table.ts";

/**
 * Analytics count inference traffic: routes of data-plane families, inference routes of other families (a saved
 * prompt's completions), and custom logs; not control-plane calls.
 */
export const COUNTED_ROUTES = new Set(
  ROUTE_FAMILIES.flatMap((family) =>
    family.routes.filter((route) => family.dataPlane || route.inference).map((route) => route.path),
  ),
);

import { FilterSyntaxError, matchesFilter, parseFilter } from "./filter.ts";
import { LIST_RESPONSE_SCHEMA, ScimError } from "./errors.ts";

/** SCIM list query (RFC 7644 3.4.2): `filter`, 1-based `startIndex`, `count` (at most MAX_COUNT). */
export interface ScimListQuery {
  filter?: string;
  startIndex?: number;
  count?: number;
}

export const MAX_COUNT = 200;

/** A ListResponse page of already-presented resources, filtered and sliced as the query asks. */
export function listResponse<T>(resources: T[], query: ScimListQuery) {
  let matched = resources;
  if (query.filter?.trim()) {
    let filter: ReturnType<typeof parseFilter>;
    try {
      filter = parseFilter(query.filter);
    } catch (error) {
      if (error instanceof FilterSyntaxError) throw new ScimError(400, error.message, "invalidFilter");
      throw error;
    }
    matched = resources.filter((resource) => matchesFilter(filter, resource));
  }
  // RFC 7644: startIndex below 1 is read as 1; a negative count as 0.
  const startIndex = Math.max(1, Math.floor(query.startIndex ?? 1));
  const count = Math.min(MAX_COUNT, Math.max(0, Math.floor(query.count ?? MAX_COUNT)));
  const page = matched.slice(startIndex - 1, startIndex - 1 + count);
  return {
    schemas: [LIST_RESPONSE_SCHEMA],
    totalResults: matched.length,
    startIndex,
    itemsPerPage: page.length,
    Resources: page,
  };
}

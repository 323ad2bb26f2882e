import * as z from "zod";
import type { Page } from "../store/ports.ts";
import { json, validate } from "./json.ts";

/**
 * The HTTP side of list routes: the common list query, and the OpenAI-style list body of a page a service
 * returned (core/control/paging.ts runs the store's list and turns a malformed cursor into Invalid).
 */

/** Common list query: `limit` (1..100, default 20), `cursor` (or `after`), optional `workspace_id`. */
export const listQuerySchema = z.looseObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().optional(),
  after: z.string().optional(),
  workspace_id: z.string().optional(),
});

export function readListQuery(request: Request) {
  const query = validate(listQuerySchema, Object.fromEntries(new URL(request.url).searchParams));
  return { ...query, cursor: query.cursor ?? query.after };
}

/** OpenAI-style list body: `object: "list"`, `data`, `has_more`, plus `next_cursor` and `total` when known. */
export function listResponse<T>(
  page: Page<T> & { total?: number },
  present: (item: T) => unknown = (item) => item,
): Response {
  return json({
    object: "list",
    data: page.items.map(present),
    ...(page.total !== undefined ? { total: page.total } : {}),
    has_more: page.cursor !== undefined,
    next_cursor: page.cursor ?? null,
    first_id: (page.items[0] as { id?: string } | undefined)?.id ?? null,
    last_id: (page.items.at(-1) as { id?: string } | undefined)?.id ?? null,
  });
}

import * as z from "zod";
import { badRequest } from "../http/errors.ts";
import { json, validate } from "../http/json.ts";
import type { Page } from "../store/ports.ts";

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

/** Runs a list, turning a malformed cursor into a 400. */
export async function listPage<T>(run: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RangeError) throw badRequest("Invalid cursor.", "cursor", "invalid_cursor");
    throw error;
  }
}

/** OpenAI-style list body: `object: "list"`, `data`, `has_more`, plus `next_cursor` and `total` when known. */
export function listResponse<T>(page: Page<T>, present: (item: T) => unknown = (item) => item): Response {
  return json({
    object: "list",
    data: page.items.map(present),
    has_more: page.cursor !== undefined,
    next_cursor: page.cursor ?? null,
    first_id: (page.items[0] as { id?: string } | undefined)?.id ?? null,
    last_id: (page.items.at(-1) as { id?: string } | undefined)?.id ?? null,
  });
}

import { badRequest } from "../../http/errors.ts";

/**
 * One page of a response's input items (spec 2.3, 4.1; OpenAI's ResponseItemList). A response's input items are
 * a short list read whole, so paging is done on the array: `after` and `before` name item ids of that list.
 */

export interface InputItemQuery {
  /** 1..100, default 20. */
  limit?: number;
  /** `asc` (the order they were sent, the default) or `desc`. */
  order?: string;
  /** Items that come after this item id, in the listing order. */
  after?: string;
  /** Items that come before this item id, in the listing order. */
  before?: string;
}

export interface ResponseItemList {
  object: "list";
  data: Record<string, any>[];
  has_more: boolean;
  /** Null only for an empty page. */
  first_id: string | null;
  last_id: string | null;
}

export const DEFAULT_INPUT_ITEMS_LIMIT = 20;
export const MAX_INPUT_ITEMS_LIMIT = 100;

/**
 * The page `query` asks for. `after` pages forward: the first `limit` items after it. `before` alone pages back:
 * the `limit` items just before it (the previous page), still in the listing order. Both together bound a window
 * read forward. `has_more` says more items lie beyond the page in the direction read. 400 (naming the param) for a
 * limit that is not an integer in 1..100, an order other than asc/desc, or a cursor that is not an item's id.
 */
export function inputItemPage(items: readonly Record<string, any>[], query: InputItemQuery): ResponseItemList {
  const limit = query.limit ?? DEFAULT_INPUT_ITEMS_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_INPUT_ITEMS_LIMIT) {
    throw badRequest(
      `Invalid 'limit': expected an integer from 1 to ${MAX_INPUT_ITEMS_LIMIT}.`,
      "limit",
      "invalid_value",
    );
  }
  const order = query.order ?? "asc";
  if (order !== "asc" && order !== "desc") {
    throw badRequest(`Invalid 'order': expected 'asc' or 'desc', got '${order}'.`, "order", "invalid_value");
  }
  const listed = order === "asc" ? items : [...items].reverse();
  const start = query.after === undefined ? 0 : positionOf(listed, query.after, "after") + 1;
  const end = query.before === undefined ? listed.length : positionOf(listed, query.before, "before");
  const window = listed.slice(start, Math.max(start, end));
  const backward = query.before !== undefined && query.after === undefined;
  const data = backward ? window.slice(Math.max(0, window.length - limit)) : window.slice(0, limit);
  return {
    object: "list",
    data,
    has_more: window.length > data.length,
    first_id: data[0]?.id ?? null,
    last_id: data.at(-1)?.id ?? null,
  };
}

function positionOf(items: readonly Record<string, any>[], id: string, param: "after" | "before"): number {
  const position = items.findIndex((item) => item.id === id);
  if (position === -1) {
    throw badRequest(`Invalid '${param}': no input item with id '${id}' in this response.`, param, "invalid_value");
  }
  return position;
}

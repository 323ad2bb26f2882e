import type { Page } from "../store/ports.ts";
import { Invalid } from "./errors.ts";

/** What a list call takes: page size and the cursor a previous page returned. */
export interface PageRequest {
  limit: number;
  cursor?: string;
}

/** Runs a store list, turning its RangeError for a malformed cursor into an Invalid `cursor`. */
export async function readPage<T>(run: () => Promise<Page<T>>): Promise<Page<T>> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof RangeError) throw invalidCursor();
    throw error;
  }
}

export const invalidCursor = () => new Invalid("Invalid cursor.", { param: "cursor", code: "invalid_cursor" });

/** A page of a list read whole (short lists: exclusions, guardrails), with how many the list holds in all. */
export interface CountedPage<T> extends Page<T> {
  total: number;
}

/** The position an offset cursor stands for (0 without one); Invalid for a malformed cursor. */
export function offsetOf(cursor: string | undefined): number {
  if (!cursor) return 0;
  const match = /^offset:(\d{1,7})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  if (!match) throw invalidCursor();
  return Number(match[1]);
}

/** `limit` items of a list read whole, from `start`; the cursor (an offset) names the next page. */
export function offsetPage<T>(items: readonly T[], start: number, limit: number): CountedPage<T> {
  const end = start + limit;
  const cursor = end < items.length ? Buffer.from(`offset:${end}`).toString("base64url") : undefined;
  return { items: items.slice(start, end), cursor, total: items.length };
}

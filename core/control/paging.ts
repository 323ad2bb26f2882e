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

import { HttpError } from "../../http/errors.ts";

/**
 * `previous_response_id` chains: a new request continues the conversation a stored response ended, i.e. the items
 * that response's model saw (its `context`) followed by what it answered (its `output`, as input items).
 * Instructions are not items, so they are never carried over (spec 2.1: a new request gives its own).
 */

/** An output item as an input item of the next request. */
export function outputAsInput(item: Record<string, any>): Record<string, any> {
  // Assistant messages go back as output messages (`output_text` parts), which the Responses input accepts; tool
  // calls and reasoning items go back as they are, so that call ids and encrypted reasoning still match.
  if (item.type === "message") return { ...item, type: "message", role: "assistant" };
  return { ...item };
}

/** The items to prepend for a request continuing from a response with this context and output. */
export function continuedConversation(
  context: readonly Record<string, any>[],
  output: readonly Record<string, any>[] | undefined,
): Record<string, any>[] {
  return [...context.map((item) => ({ ...item })), ...(output ?? []).map(outputAsInput)];
}

/** The request's own input as items (a string input is one user message). */
export function inputItemsOf(input: unknown): Array<Record<string, any>> {
  if (typeof input === "string")
    return [{ type: "message", role: "user", content: [{ type: "input_text", text: input }] }];
  if (!Array.isArray(input)) return [];
  return input.map((item) =>
    item && typeof item === "object" && !("type" in item) ? { type: "message", ...item } : item,
  );
}

/**
 * A stored conversation as items a provider accepts again: item ids are the gateway's (or another provider's)
 * and would be read as references to items the provider stored, so they are dropped; reasoning items are only
 * meaningful to the provider that made them with their encrypted content, so the others are left out.
 */
export function sendableHistory(items: Array<Record<string, any>>): Array<Record<string, any>> {
  const sendable: Array<Record<string, any>> = [];
  for (const item of items) {
    if (item.type === "reasoning" && typeof item.encrypted_content !== "string") continue;
    if (item.type === "reasoning") {
      sendable.push(item);
      continue;
    }
    const { id: _id, status: _status, ...rest } = item;
    sendable.push(rest);
  }
  return sendable;
}

/** OpenAI's answer for a `previous_response_id` that is unknown (or another workspace's). */
export const previousResponseNotFound = (id: string) =>
  new HttpError(404, `Previous response with id '${id}' not found.`, {
    param: "previous_response_id",
    code: "previous_response_not_found",
  });

/** A background response still running has no output yet: continuing from it would silently drop its answer. */
export const previousResponseNotFinished = (id: string, status: string) =>
  new HttpError(400, `Previous response with id '${id}' is still ${status.replace("_", " ")}; wait for it to finish.`, {
    param: "previous_response_id",
    code: "previous_response_not_finished",
  });

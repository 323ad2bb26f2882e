import type { ResponseOwner } from "./owner.ts";
import type { ResponseStore } from "./response-store.ts";

/**
 * `item_reference` input items (`{type: "item_reference", id}`, or OpenAI's older `{id}` alone) name an output item
 * of an earlier stored response instead of repeating it; the AI SDK's Responses model sends them for every
 * assistant message, tool call and reasoning item of a tool loop once `store` is on. The gateway stored those
 * items itself, so it puts them back in place before the pipeline runs: a provider without a native Responses
 * API (reached through chat) could not resolve them, and a chain may move between providers. Only the caller's
 * own workspace is searched (another's items are as unknown as a made-up id).
 *
 * What stays a reference: an id the store does not hold (a provider's native Responses API may know it; the chat
 * translation refuses it with a 400), and a reasoning item of a native answer without its encrypted content (only
 * the provider that made it can use it, through the reference). A translated answer's reasoning item (a summary
 * no provider takes back) is left out, as previous_response_id leaves it out.
 */

type Json = Record<string, any>;

/** Whether an input item is a reference rather than an item itself. */
export function isItemReference(item: Json): boolean {
  if (item?.type === "item_reference") return true;
  return item?.type === undefined && item?.role === undefined && typeof item?.id === "string";
}

/** `input` with every reference the store resolves replaced by the item it names, as a provider accepts it again. */
export async function resolveItemReferences(
  store: Pick<ResponseStore, "findOutputItem">,
  owner: ResponseOwner,
  input: Json[],
): Promise<Json[]> {
  if (!input.some(isItemReference)) return input;
  const found = await Promise.all(
    input.map((item) => (isItemReference(item) ? store.findOutputItem(owner, String(item.id)) : undefined)),
  );
  const resolved: Json[] = [];
  input.forEach((item, index) => {
    const stored = found[index];
    if (!stored) resolved.push(item);
    else if (stored.item.type !== "reasoning") resolved.push(asInputItem(stored.item));
    // Reasoning goes back whole, id included, as previous_response_id sends it (its encrypted content is the point).
    else if (typeof stored.item.encrypted_content === "string") resolved.push({ ...stored.item });
    // A translated answer's reasoning summary: no provider can take it back (previous_response_id drops it too).
    else if (stored.native) resolved.push(item);
  });
  return resolved;
}

/**
 * An output item sent back as input: its id and status are dropped (a provider would read the gateway's ids as
 * references to items it stored itself), and an assistant message keeps its `output_text` parts, which the
 * Responses input accepts.
 */
function asInputItem(item: Json): Json {
  const { id: _id, status: _status, ...rest } = item;
  return item.type === "message" ? { ...rest, role: "assistant" } : rest;
}

import { countDrop, type DroppedHistory } from "./counts.ts";

type Json = Record<string, any>;

/**
 * A Responses request's input for a target that did not make some of its items:
 * - reached through chat (responses/to-chat.ts), a target takes no reasoning items (chat cannot carry them:
 *   `encrypted_reasoning` when they hold OpenAI's encrypted content, else `reasoning`) and no item references
 *   (items stored by a provider it is not: `item_reference`); both are taken out here, so the request is sent
 *   without them rather than refused;
 * - a native target (OpenAI's Responses API) gets the client's own items untouched; the stored conversation the
 *   gateway put in front of them (`previous_response_id`, the first `historyItems` items) keeps its encrypted
 *   reasoning only when this target made it (the same integration: the content is sealed for one account).
 */
export function fitResponsesHistory(
  body: Json,
  target: { native: boolean; madeHistory: boolean },
  historyItems: number,
): { body: Json; dropped?: DroppedHistory } {
  const input = body.input;
  if (!Array.isArray(input) || (target.native && (target.madeHistory || historyItems === 0))) return { body };
  const dropped: DroppedHistory = {};
  const kept = input.filter((item: Json, index: number) => {
    const fromHistory = index < historyItems;
    if (item?.type === "reasoning") {
      if (target.native && !fromHistory) return true;
      if (target.native && typeof item.encrypted_content !== "string") return true;
      countDrop(dropped, typeof item.encrypted_content === "string" ? "encrypted_reasoning" : "reasoning");
      return false;
    }
    if (!target.native && isItemReference(item)) {
      countDrop(dropped, "item_reference");
      return false;
    }
    return true;
  });
  return kept.length === input.length ? { body } : { body: { ...body, input: kept }, dropped };
}

/** An item that names a stored item instead of giving it: `{type: "item_reference", id}` or an untyped `{id}`. */
function isItemReference(item: Json): boolean {
  return item?.type === "item_reference" || (item?.type === undefined && item?.role === undefined && "id" in item);
}

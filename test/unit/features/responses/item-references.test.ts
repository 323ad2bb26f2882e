import { describe, expect, it } from "vitest";
import { isItemReference, resolveItemReferences } from "../../../../core/features/responses/item-references.ts";

const owner = { organisationId: "org_1", workspaceId: "ws_1" };

/** A store holding these output items (by id), as responses of a native provider or not. */
function storeOf(items: Record<string, { item: Record<string, any>; native: boolean }>) {
  const asked: string[] = [];
  return {
    asked,
    async findOutputItem(_owner: typeof owner, id: string) {
      asked.push(id);
      return items[id];
    },
  };
}

describe("item references", () => {
  it("are `item_reference` items, or OpenAI's older `{id}` alone", () => {
    expect(isItemReference({ type: "item_reference", id: "msg_1" })).toBe(true);
    expect(isItemReference({ id: "msg_1" })).toBe(true);
    expect(isItemReference({ role: "user", content: "x" })).toBe(false);
    expect(isItemReference({ type: "message", id: "msg_1", role: "assistant", content: [] })).toBe(false);
  });

  it("are replaced by the stored items, as input a provider takes; unknown ones are left", async () => {
    const message = {
      id: "msg_1",
      type: "message",
      status: "completed",
      role: "assistant",
      content: [{ type: "output_text", text: "Paris.", annotations: [] }],
    };
    const call = { id: "fc_1", type: "function_call", status: "completed", call_id: "c1", name: "f", arguments: "{}" };
    const store = storeOf({ msg_1: { item: message, native: false }, fc_1: { item: call, native: true } });
    const input = [
      { role: "user", content: "Hi" },
      { type: "item_reference", id: "msg_1" },
      { id: "fc_1" },
      { type: "item_reference", id: "msg_unknown" },
    ];
    const resolved = await resolveItemReferences(store, owner, input);
    expect(resolved).toEqual([
      { role: "user", content: "Hi" },
      { type: "message", role: "assistant", content: message.content },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "item_reference", id: "msg_unknown" },
    ]);
    expect(store.asked).toEqual(["msg_1", "fc_1", "msg_unknown"]);
  });

  it("keeps reasoning only where a provider can use it", async () => {
    const encrypted = { id: "rs_1", type: "reasoning", summary: [], encrypted_content: "gAAA" };
    const nativeSummary = { id: "rs_2", type: "reasoning", summary: [] };
    const translatedSummary = { id: "rs_3", type: "reasoning", summary: [{ type: "summary_text", text: "x" }] };
    const store = storeOf({
      rs_1: { item: encrypted, native: true },
      rs_2: { item: nativeSummary, native: true },
      rs_3: { item: translatedSummary, native: false },
    });
    const input = ["rs_1", "rs_2", "rs_3"].map((id) => ({ type: "item_reference", id }));
    expect(await resolveItemReferences(store, owner, input)).toEqual([
      encrypted,
      { type: "item_reference", id: "rs_2" },
    ]);
  });

  it("asks the store nothing when the input has no reference", async () => {
    const store = storeOf({});
    const input = [{ role: "user", content: "Hi" }];
    expect(await resolveItemReferences(store, owner, input)).toBe(input);
    expect(store.asked).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { assignItemIds } from "../../../../core/features/responses/item-ids.ts";

describe("input items as stored", () => {
  it("turns a string input into one user message with an OpenAI-style id and status", () => {
    const [item, ...rest] = assignItemIds("Hello");
    expect(rest).toEqual([]);
    expect(item).toEqual({
      id: expect.stringMatching(/^msg_[0-9a-f]{32}$/),
      type: "message",
      role: "user",
      content: [{ type: "input_text", text: "Hello" }],
      status: "completed",
    });
    expect(Object.keys(item!)[0]).toBe("id");
  });

  it("spells out message shorthand: input_text for user, system and developer, output_text for assistant", () => {
    const items = assignItemIds([
      { role: "developer", content: "Be brief." },
      { role: "assistant", content: "Earlier answer" },
      { type: "message", role: "user", content: [{ type: "input_image", image_url: "https://x.test/a.png" }] },
    ]);
    expect(items.map((item) => item.content)).toEqual([
      [{ type: "input_text", text: "Be brief." }],
      [{ type: "output_text", text: "Earlier answer", annotations: [] }],
      [{ type: "input_image", image_url: "https://x.test/a.png" }],
    ]);
    expect(items.every((item) => item.type === "message" && item.status === "completed")).toBe(true);
  });

  it("names items by kind, keeps given ids and statuses, and gives status only to kinds that have one", () => {
    const items = assignItemIds([
      { type: "function_call", call_id: "call_1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "call_1", output: "ok" },
      { type: "custom_tool_call_output", call_id: "call_2", output: "ok" },
      { type: "reasoning", summary: [] },
      { type: "computer_call_output", call_id: "call_3", output: { type: "computer_screenshot" } },
      { type: "item_reference", id: "msg_kept" },
      { type: "function_call", id: "fc_given", call_id: "c", name: "f", arguments: "{}", status: "incomplete" },
      { type: "some_future_item" },
    ]);
    expect(items.map((item) => item.id.replace(/_[0-9a-f]{32}$/, "_*"))).toEqual([
      "fc_*",
      "fco_*",
      "ctco_*",
      "rs_*",
      "cuo_*",
      "msg_kept",
      "fc_given",
      "item_*",
    ]);
    expect(items.map((item) => item.status)).toEqual([
      "completed",
      "completed",
      "completed",
      undefined,
      "completed",
      undefined,
      "incomplete",
      undefined,
    ]);
  });

  it("gives every item its own id and leaves the input untouched", () => {
    const input = [
      { role: "user", content: "a" },
      { role: "user", content: "b" },
    ] as const;
    const items = assignItemIds(input);
    expect(new Set(items.map((item) => item.id)).size).toBe(2);
    expect(input[0]).toEqual({ role: "user", content: "a" });
  });
});

import { describe, expect, it } from "vitest";
import { copyJson } from "../../../core/util/copy-json.ts";

describe("copyJson", () => {
  it("copies every level, so changing the copy leaves the original as it was", () => {
    const original = { id: "msg_1", content: [{ type: "output_text", text: "", annotations: [] }], n: 1, ok: null };
    const copy = copyJson(original);
    expect(copy).toEqual(original);
    copy.content[0]!.text += "changed";
    copy.content.push({ type: "refusal", text: "", annotations: [] });
    expect(original.content).toEqual([{ type: "output_text", text: "", annotations: [] }]);
  });

  it("keeps a parsed `__proto__` field as a field, never as the copy's prototype", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const copy = copyJson(parsed);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect((copy as Record<string, unknown>).polluted).toBeUndefined();
    expect(JSON.stringify(copy)).toBe('{"__proto__":{"polluted":true},"a":1}');
  });

  it("copies a provider's deeply nested value without overflowing the call stack", () => {
    let deep: unknown = "leaf";
    for (let i = 0; i < 20_000; i++) deep = [deep];
    let copy = copyJson(deep) as unknown;
    let original = deep;
    let shared = 0;
    for (let level = 0; level < 20_000; level++) {
      if (copy === original) shared++;
      copy = (copy as unknown[])[0];
      original = (original as unknown[])[0];
    }
    expect(shared).toBe(0);
    expect(copy).toBe("leaf");
  });
});

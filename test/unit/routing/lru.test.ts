import { describe, expect, it } from "vitest";
import { Lru } from "../../../core/routing/lru.ts";

describe("Lru", () => {
  it("evicts the least recently used entry, a read making an entry recent", () => {
    const lru = new Lru<string, number>(3);
    lru.set("a", 1);
    lru.set("b", 2);
    lru.set("c", 3);
    expect(lru.get("a")).toBe(1); // a is now the newest: b is the oldest
    lru.set("d", 4);
    expect(lru.get("b")).toBeUndefined();
    expect([lru.get("a"), lru.get("c"), lru.get("d")]).toEqual([1, 3, 4]);
    expect(lru.size).toBe(3);
  });

  it("keeps the order right when the newest key is read again and again", () => {
    const lru = new Lru<string, number>(2);
    lru.set("a", 1);
    lru.set("b", 2);
    for (let i = 0; i < 5; i++) expect(lru.get("b")).toBe(2);
    expect(lru.get("a")).toBe(1); // a newest, b oldest
    lru.set("c", 3);
    expect(lru.get("b")).toBeUndefined();
    expect(lru.get("a")).toBe(1);
    lru.set("a", 10); // overwriting the newest keeps one entry
    expect(lru.size).toBe(2);
    expect(lru.get("a")).toBe(10);
  });
});

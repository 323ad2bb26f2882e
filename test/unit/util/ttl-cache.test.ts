import { describe, expect, it } from "vitest";
import { TtlCache } from "../../../core/util/ttl-cache.ts";

function clock(start = 0) {
  const time = { now: start };
  return { time, now: () => time.now };
}

describe("TtlCache", () => {
  it("keeps an entry read while the cache was filling over entries only inserted", () => {
    const cache = new TtlCache<string, number>({ ttlMs: Infinity, maxEntries: 4 });
    for (const [key, value] of [
      ["a", 1],
      ["b", 2],
      ["c", 3],
    ] as const)
      cache.set(key, value);
    expect(cache.get("a")).toBe(1); // half full: the read counts
    cache.set("d", 4);
    cache.set("e", 5); // over the bound: the oldest unread entry goes
    expect(cache.get("b")).toBeUndefined();
    expect([cache.get("a"), cache.get("c"), cache.get("d"), cache.get("e")]).toEqual([1, 3, 4, 5]);
  });

  it("evicts the least recently used entry, a read making an entry recent", () => {
    const cache = new TtlCache<string, number>({ ttlMs: Infinity, maxEntries: 3 });
    cache.set("a", 1);
    cache.set("b", 2);
    cache.set("c", 3);
    expect(cache.get("a")).toBe(1); // a is now the newest: b is the oldest
    cache.set("d", 4);
    expect(cache.get("b")).toBeUndefined();
    expect([cache.get("a"), cache.get("c"), cache.get("d")]).toEqual([1, 3, 4]);
    expect(cache.size).toBe(3);
  });

  it("keeps the order right when the newest key is read again and again", () => {
    const cache = new TtlCache<string, number>({ ttlMs: Infinity, maxEntries: 2 });
    cache.set("a", 1);
    cache.set("b", 2);
    for (let i = 0; i < 5; i++) expect(cache.get("b")).toBe(2);
    expect(cache.get("a")).toBe(1);
    cache.set("c", 3);
    expect(cache.get("b")).toBeUndefined();
    cache.set("a", 10);
    expect(cache.size).toBe(2);
    expect(cache.get("a")).toBe(10);
  });

  it("expires entries after their time to live (the cache's, or one given per entry)", () => {
    const { time, now } = clock();
    const cache = new TtlCache<string, string>({ ttlMs: 1_000, maxEntries: 10, now });
    cache.set("long", "x");
    cache.set("short", "y", 100);
    time.now = 99;
    expect([cache.get("long"), cache.get("short")]).toEqual(["x", "y"]);
    time.now = 100;
    expect(cache.get("short")).toBeUndefined();
    time.now = 1_000;
    expect(cache.get("long")).toBeUndefined();
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });

  it("is bounded by bytes: large values push out old ones, and one over the bound is not kept", () => {
    const cache = new TtlCache<string, string>({
      ttlMs: Infinity,
      maxEntries: 1_000,
      maxBytes: 10_000,
      sizeOf: (key, value) => (key.length + value.length) * 2,
    });
    for (let i = 0; i < 10; i++) cache.set(`k${i}`, "v".repeat(1_000));
    expect(cache.bytes).toBeLessThanOrEqual(10_000);
    expect(cache.size).toBe(4);
    expect(cache.get("k9")).toBeDefined();
    expect(cache.get("k0")).toBeUndefined();
    cache.set("huge", "v".repeat(20_000));
    expect(cache.get("huge")).toBeUndefined();
    expect(cache.get("k9")).toBeDefined();
  });

  it("deletes one entry only while it holds the value, and all entries whose key matches", () => {
    const cache = new TtlCache<string, string>({ ttlMs: Infinity, maxEntries: 10 });
    cache.set("org_a:1", "a1");
    cache.set("org_a:2", "a2");
    cache.set("org_b:1", "b1");
    cache.deleteIf("org_b:1", "older");
    expect(cache.get("org_b:1")).toBe("b1");
    cache.deleteIf("org_b:1", "b1");
    expect(cache.get("org_b:1")).toBeUndefined();
    cache.deleteWhere((key) => key.startsWith("org_a:"));
    expect(cache.size).toBe(0);
    expect(cache.bytes).toBe(0);
  });
});

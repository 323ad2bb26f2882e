import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { Counters } from "../../core/store/ports.ts";

const counterKey = (name: string) => `test:${randomUUID()}:${name}`;
const nowSeconds = () => Date.now() / 1000;

export function countersContract(getCounters: () => Counters) {
  describe("Counters", () => {
    it("adds, reads and deletes", async () => {
      const counters = getCounters();
      const key = counterKey("basic");
      expect(await counters.get(key)).toBe(0);
      expect(await counters.add(key, 5)).toEqual({ admitted: true, value: 5 });
      expect(await counters.add(key, 2.5)).toEqual({ admitted: true, value: 7.5 });
      expect(await counters.add(key, -1.5)).toEqual({ admitted: true, value: 6 });
      expect(await counters.get(key)).toBe(6);

      const other = counterKey("other");
      await counters.add(other, 1);
      const missing = counterKey("missing");
      expect(await counters.getMany([key, other, missing, key])).toEqual(
        new Map([
          [key, 6],
          [other, 1],
          [missing, 0],
        ]),
      );

      await counters.delete(key);
      expect(await counters.get(key)).toBe(0);
      expect(await counters.add(key, 1)).toEqual({ admitted: true, value: 1 });
    });

    it("reads many counters at once, past one batch", async () => {
      const counters = getCounters();
      const keys = Array.from({ length: 130 }, (_, i) => counterKey(`many${i}`));
      await Promise.all(keys.slice(0, 120).map((key, i) => counters.add(key, i)));
      const values = await counters.getMany(keys);
      expect(values.size).toBe(130);
      expect(keys.map((key) => values.get(key))).toEqual(keys.map((_, i) => (i < 120 ? i : 0)));
    });

    it("refuses an add that would pass the ceiling and leaves the value unchanged", async () => {
      const counters = getCounters();
      const key = counterKey("ceiling");
      expect(await counters.add(key, 11, { ceiling: 10 })).toEqual({ admitted: false, value: 0 });
      expect(await counters.add(key, 8, { ceiling: 10 })).toEqual({ admitted: true, value: 8 });
      expect(await counters.add(key, 3, { ceiling: 10 })).toEqual({ admitted: false, value: 8 });
      expect(await counters.add(key, 2, { ceiling: 10 })).toEqual({ admitted: true, value: 10 });
      expect(await counters.add(key, 1, { ceiling: 10 })).toEqual({ admitted: false, value: 10 });
      expect(await counters.get(key)).toBe(10);
    });

    it("admits exactly up to the ceiling under 200 concurrent adds", async () => {
      const counters = getCounters();
      const key = counterKey("race");
      const results = await Promise.all(Array.from({ length: 200 }, () => counters.add(key, 1, { ceiling: 150 })));
      expect(results.filter((result) => result.admitted)).toHaveLength(150);
      expect(results.every((result) => result.value <= 150)).toBe(true);
      expect(await counters.get(key)).toBe(150);
    });

    it("admits an add of any size while the value is below `below`, and refuses it from there", async () => {
      const counters = getCounters();
      const key = counterKey("below");
      expect(await counters.add(key, 7, { below: 0 })).toEqual({ admitted: false, value: 0 });
      expect(await counters.get(key)).toBe(0);
      // Larger than the whole budget, admitted: the counter was below it.
      expect(await counters.add(key, 15, { below: 10 })).toEqual({ admitted: true, value: 15 });
      expect(await counters.add(key, 1, { below: 10 })).toEqual({ admitted: false, value: 15 });
      // Settling a reservation down (a negative add, no condition) opens the budget again.
      expect(await counters.add(key, -9)).toEqual({ admitted: true, value: 6 });
      expect(await counters.add(key, 4, { below: 10 })).toEqual({ admitted: true, value: 10 });
      expect(await counters.add(key, 0, { below: 10 })).toEqual({ admitted: false, value: 10 });
      expect(await counters.get(key)).toBe(10);
    });

    it("admits exactly the adds that find the value below `below` under 200 concurrent adds", async () => {
      const counters = getCounters();
      const key = counterKey("below-race");
      // Each add reserves 7 against a budget of 100: 15 find it below 100 (0, 7, ..., 98), the 16th finds 105.
      const results = await Promise.all(Array.from({ length: 200 }, () => counters.add(key, 7, { below: 100 })));
      expect(results.filter((result) => result.admitted)).toHaveLength(15);
      expect(await counters.get(key)).toBe(105);
      expect(results.filter((result) => !result.admitted).every((result) => result.value === 105)).toBe(true);
    });

    it("restarts an expired counter from 0", async () => {
      const counters = getCounters();
      const key = counterKey("expired");
      // Created already past its expiry: the add counts, but nothing survives it.
      expect(await counters.add(key, 4, { expiresAt: nowSeconds() - 1 })).toEqual({ admitted: true, value: 4 });
      expect(await counters.get(key)).toBe(0);
      expect(await counters.add(key, 3, { expiresAt: nowSeconds() + 60, ceiling: 5 })).toEqual({
        admitted: true,
        value: 3,
      });
      expect(await counters.get(key)).toBe(3);
    });

    it("keeps the expiry a live counter has, then starts a new window", async () => {
      const counters = getCounters();
      const key = counterKey("window");
      const windowEnd = nowSeconds() + 0.7;
      await counters.add(key, 5, { expiresAt: windowEnd });
      // A later add with another expiry does not extend the window.
      expect(await counters.add(key, 1, { expiresAt: windowEnd + 60 })).toEqual({ admitted: true, value: 6 });
      expect(await counters.getMany([key])).toEqual(new Map([[key, 6]]));
      await sleep(Math.max(0, (windowEnd - nowSeconds()) * 1000) + 50);
      expect(await counters.get(key)).toBe(0);
      expect(await counters.getMany([key])).toEqual(new Map([[key, 0]]));
      expect(await counters.add(key, 2, { ceiling: 5, expiresAt: nowSeconds() + 60 })).toEqual({
        admitted: true,
        value: 2,
      });
    });
  });
}

import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ConditionFailedError, type RecordItem, type Records } from "../../core/store/ports.ts";

/** A partition no other test (or earlier run against the same emulator) uses. */
const partition = (name: string) => `test#${randomUUID()}#${name}`;
const now = () => Math.floor(Date.now() / 1000);

async function readAll(records: Records, query: Parameters<Records["query"]>[0]) {
  const pages: RecordItem[][] = [];
  let cursor: string | undefined;
  do {
    const page = await records.query({ ...query, cursor });
    pages.push(page.items);
    cursor = page.cursor;
  } while (cursor);
  return pages;
}

export function recordsContract(getRecords: () => Records) {
  describe("Records", () => {
    it("puts, gets, updates and deletes an item", async () => {
      const records = getRecords();
      const pk = partition("crud");
      expect(await records.get(pk, "a")).toBeUndefined();

      await records.put({ pk, sk: "a", name: "first", nested: { list: [1, "two", null], flag: true } });
      expect(await records.get(pk, "a")).toEqual({
        pk,
        sk: "a",
        name: "first",
        nested: { list: [1, "two", null], flag: true },
      });

      const updated = await records.update(pk, "a", { set: { name: "second", count: 3 }, remove: ["nested"] });
      expect(updated).toEqual({ pk, sk: "a", name: "second", count: 3 });
      expect(await records.get(pk, "a")).toEqual(updated);

      // Setting undefined removes the attribute, as JSON would.
      expect(await records.update(pk, "a", { set: { count: undefined } })).toEqual({ pk, sk: "a", name: "second" });

      await records.put({ pk, sk: "a", replaced: true });
      expect(await records.get(pk, "a")).toEqual({ pk, sk: "a", replaced: true });

      await records.delete(pk, "a");
      expect(await records.get(pk, "a")).toBeUndefined();
      await records.delete(pk, "a"); // deleting an absent item is not an error
    });

    it("refuses to change key attributes", async () => {
      const records = getRecords();
      const pk = partition("keys");
      await records.put({ pk, sk: "a" });
      await expect(records.update(pk, "a", { set: { sk: "b" } })).rejects.toThrow(RangeError);
      await expect(records.update(pk, "a", { remove: ["pk"] })).rejects.toThrow(RangeError);
      await expect(records.put({ pk: "", sk: "a" })).rejects.toThrow(RangeError);
    });

    it("put with exists:false admits only the first writer", async () => {
      const records = getRecords();
      const pk = partition("create");
      await records.put({ pk, sk: "a", who: 1 }, { exists: false });
      await expect(records.put({ pk, sk: "a", who: 2 }, { exists: false })).rejects.toBeInstanceOf(
        ConditionFailedError,
      );
      expect((await records.get(pk, "a"))?.who).toBe(1);

      // Of many concurrent creators exactly one wins.
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, who) => records.put({ pk, sk: "race", who }, { exists: false })),
      );
      expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
      for (const result of results.filter((r) => r.status === "rejected")) {
        expect((result as PromiseRejectedResult).reason).toBeInstanceOf(ConditionFailedError);
      }
    });

    it("checks exists:true and update of absent items", async () => {
      const records = getRecords();
      const pk = partition("exists");
      await expect(records.put({ pk, sk: "a" }, { exists: true })).rejects.toBeInstanceOf(ConditionFailedError);
      await expect(records.update(pk, "a", { set: { x: 1 } })).rejects.toBeInstanceOf(ConditionFailedError);
      await expect(records.delete(pk, "a", { exists: true })).rejects.toBeInstanceOf(ConditionFailedError);
      await records.put({ pk, sk: "a", x: 0 });
      await records.put({ pk, sk: "a", x: 1 }, { exists: true });
      expect(await records.update(pk, "a", {}, { exists: true })).toEqual({ pk, sk: "a", x: 1 });
      await records.delete(pk, "a", { exists: true });
      expect(await records.get(pk, "a")).toBeUndefined();
    });

    it("guards writes with equals (optimistic locking on a version)", async () => {
      const records = getRecords();
      const pk = partition("version");
      await records.put({ pk, sk: "cfg", version: 1, body: "v1" });

      const v2 = await records.update(pk, "cfg", { set: { version: 2, body: "v2" } }, { equals: { version: 1 } });
      expect(v2).toMatchObject({ version: 2, body: "v2" });
      // A writer that read version 1 loses.
      await expect(
        records.update(pk, "cfg", { set: { version: 2, body: "stale" } }, { equals: { version: 1 } }),
      ).rejects.toBeInstanceOf(ConditionFailedError);
      await expect(records.put({ pk, sk: "cfg", version: 9 }, { equals: { version: 1 } })).rejects.toBeInstanceOf(
        ConditionFailedError,
      );
      await expect(records.delete(pk, "cfg", { equals: { version: 1 } })).rejects.toBeInstanceOf(ConditionFailedError);
      expect((await records.get(pk, "cfg"))?.body).toBe("v2");

      // Several attributes must all match; null means "attribute absent".
      await expect(
        records.update(pk, "cfg", { set: { body: "x" } }, { equals: { version: 2, body: "other" } }),
      ).rejects.toBeInstanceOf(ConditionFailedError);
      await records.update(pk, "cfg", { set: { lockedBy: "me" } }, { equals: { version: 2, lockedBy: null } });
      await expect(
        records.update(pk, "cfg", { set: { lockedBy: "you" } }, { equals: { lockedBy: null } }),
      ).rejects.toBeInstanceOf(ConditionFailedError);
      await records.put({ pk, sk: "new" }, { equals: { version: null } }); // absent item: attribute absent too
      await records.delete(pk, "cfg", { equals: { version: 2, lockedBy: "me" } });
      expect(await records.get(pk, "cfg")).toBeUndefined();
    });

    it("queries a partition by prefix and range, in both orders", async () => {
      const records = getRecords();
      const pk = partition("query");
      const sks = ["a#1", "a#2", "a#3", "b#1", "b#2", "c"];
      await Promise.all(sks.map((sk) => records.put({ pk, sk })));
      await records.put({ pk: `${pk}-other`, sk: "a#9" });
      const keys = (page: { items: RecordItem[] }) => page.items.map((item) => item.sk);

      expect(keys(await records.query({ partition: pk }))).toEqual(sks);
      expect(keys(await records.query({ partition: pk, order: "desc" }))).toEqual([...sks].reverse());
      expect(keys(await records.query({ partition: pk, prefix: "a#" }))).toEqual(["a#1", "a#2", "a#3"]);
      expect(keys(await records.query({ partition: pk, prefix: "b", order: "desc" }))).toEqual(["b#2", "b#1"]);
      expect(keys(await records.query({ partition: pk, from: "a#2", to: "b#1" }))).toEqual(["a#2", "a#3", "b#1"]);
      expect(keys(await records.query({ partition: pk, from: "b" }))).toEqual(["b#1", "b#2", "c"]);
      expect(keys(await records.query({ partition: pk, to: "a#2", order: "desc" }))).toEqual(["a#2", "a#1"]);
      expect(keys(await records.query({ partition: pk, prefix: "zz" }))).toEqual([]);
      expect((await records.query({ partition: pk, limit: 2 })).items).toHaveLength(2);
      await expect(records.query({ partition: pk, prefix: "a", from: "a" })).rejects.toThrow(RangeError);
    });

    it("pages through 25 items 7 at a time with cursors, ascending and descending", async () => {
      const records = getRecords();
      const pk = partition("pages");
      const sks = Array.from({ length: 25 }, (_, i) => `item#${String(i).padStart(3, "0")}`);
      await Promise.all(sks.map((sk, i) => records.put({ pk, sk, i })));

      const ascending = await readAll(records, { partition: pk, limit: 7 });
      expect(ascending.map((page) => page.length).slice(0, 4)).toEqual([7, 7, 7, 4]);
      expect(ascending.flat().map((item) => item.sk)).toEqual(sks);

      const descending = await readAll(records, { partition: pk, limit: 7, order: "desc", prefix: "item#" });
      expect(descending.flat().map((item) => item.sk)).toEqual([...sks].reverse());
      expect(descending[0]).toHaveLength(7);
    });

    it("queries the gsi1 index with pagination, leaving out items without index keys", async () => {
      const records = getRecords();
      const pk = partition("table");
      const index = partition("index");
      // Index sort keys tie on purpose: paging must still visit each item once.
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          records.put({ pk, sk: `s${String(i).padStart(2, "0")}`, gsi1pk: index, gsi1sk: `day#${i % 4}` }),
        ),
      );
      await records.put({ pk, sk: "not-indexed" });
      await records.put({ pk, sk: "half-indexed", gsi1pk: index });

      const pages = await readAll(records, { partition: index, index: "gsi1", limit: 5 });
      const items = pages.flat();
      expect(items).toHaveLength(12);
      expect(new Set(items.map((item) => item.sk)).size).toBe(12);
      expect(items.map((item) => item.gsi1sk)).toEqual([...items.map((item) => item.gsi1sk as string)].sort());

      const day2 = await records.query({ partition: index, index: "gsi1", prefix: "day#2", order: "desc" });
      expect(day2.items.map((item) => item.gsi1sk)).toEqual(["day#2", "day#2", "day#2"]);
      const range = await records.query({ partition: index, index: "gsi1", from: "day#1", to: "day#2" });
      expect(range.items).toHaveLength(6);
    });

    it("treats expired items as absent in reads, queries and conditions", async () => {
      const records = getRecords();
      const pk = partition("ttl");
      await records.put({ pk, sk: "gone", ttl: now() - 10, gsi1pk: pk, gsi1sk: "x", owner: "old" });
      await records.put({ pk, sk: "live", ttl: now() + 3600, gsi1pk: pk, gsi1sk: "y" });
      await records.put({ pk, sk: "forever" });

      expect(await records.get(pk, "gone")).toBeUndefined();
      expect((await records.get(pk, "live"))?.sk).toBe("live");
      expect((await records.query({ partition: pk })).items.map((item) => item.sk)).toEqual(["forever", "live"]);
      expect((await records.query({ partition: pk, index: "gsi1" })).items.map((item) => item.sk)).toEqual(["live"]);

      await expect(records.update(pk, "gone", { set: { x: 1 } })).rejects.toBeInstanceOf(ConditionFailedError);
      await expect(records.delete(pk, "gone", { exists: true })).rejects.toBeInstanceOf(ConditionFailedError);
      await expect(records.put({ pk, sk: "gone" }, { equals: { owner: "old" } })).rejects.toBeInstanceOf(
        ConditionFailedError,
      );
      await records.put({ pk, sk: "gone", step: 1 }, { equals: { owner: null } }); // its attributes are gone too
      await records.put({ pk, sk: "gone", ttl: now() - 10 });
      await records.put({ pk, sk: "gone", reborn: true }, { exists: false });
      expect(await records.get(pk, "gone")).toEqual({ pk, sk: "gone", reborn: true });
      await expect(records.put({ pk, sk: "live" }, { exists: false })).rejects.toBeInstanceOf(ConditionFailedError);
    });

    it("fills pages even when expired items sit between live ones", async () => {
      const records = getRecords();
      const pk = partition("ttl-pages");
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          records.put({ pk, sk: `k${String(i).padStart(2, "0")}`, ...(i % 2 ? { ttl: now() - 5 } : {}) }),
        ),
      );
      const pages = await readAll(records, { partition: pk, limit: 4 });
      expect(pages[0]).toHaveLength(4);
      expect(pages[1]).toHaveLength(4);
      expect(pages.flat().map((item) => item.sk)).toEqual(
        Array.from({ length: 10 }, (_, i) => `k${String(i * 2).padStart(2, "0")}`),
      );
    });
  });
}

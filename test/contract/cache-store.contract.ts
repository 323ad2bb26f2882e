import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { CacheScope } from "../../core/inference/cache/cache-key.ts";
import { CacheStore } from "../../core/inference/cache/cache-store.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * The cache entry store on a platform's Records and Blobs: what the pipeline relies on, on every platform.
 * Time is injected, so expiry needs no waiting.
 */
export function cacheStoreContract(stores: () => Stores) {
  describe("cache store", () => {
    let now = Date.now();
    const clock = () => now;
    const store = () =>
      new CacheStore(stores().records, stores().blobs, { maxEntryBytes: 200_000, inlineBytes: 1000, now: clock });
    const scope = (): CacheScope => ({ organisationId: `org-${randomUUID()}`, workspaceId: `ws-${randomUUID()}` });
    const answer = (body: string) => ({ kind: "openai" as const, body, provider: "openai", model: "m", cost: 0.0012 });

    it("stores and reads an entry, inline and as a blob", async () => {
      const owner = scope();
      const small = randomUUID();
      const large = randomUUID();
      expect(await store().put(owner, small, answer('{"a":1}'), 60)).toBe(true);
      const big = JSON.stringify({ text: "x".repeat(5000) });
      expect(await store().put(owner, large, answer(big), 60)).toBe(true);
      expect(await store().get(owner, small)).toMatchObject({
        kind: "openai",
        body: '{"a":1}',
        cost: 0.0012,
        model: "m",
      });
      expect((await store().get(owner, large))?.body).toBe(big);
    });

    it("never serves an entry to another workspace or organisation", async () => {
      const owner = scope();
      const key = randomUUID();
      await store().put(owner, key, answer("{}"), 60);
      expect(await store().get({ ...owner, workspaceId: `ws-${randomUUID()}` }, key)).toBeUndefined();
      expect(await store().get({ ...owner, organisationId: `org-${randomUUID()}` }, key)).toBeUndefined();
      expect(await store().get({ organisationId: owner.organisationId }, key)).toBeUndefined();
      expect(await store().get(owner, key)).toBeDefined();
    });

    it("treats an expired entry as absent and deletes it (with its blob)", async () => {
      const owner = scope();
      const key = randomUUID();
      await store().put(owner, key, answer(JSON.stringify({ text: "y".repeat(3000) })), 2);
      expect(await store().get(owner, key)).toBeDefined();
      now += 2001;
      try {
        expect(await store().get(owner, key)).toBeUndefined();
        expect(await stores().records.get(`CACHE#${key}`, "entry")).toBeUndefined();
        expect(await stores().blobs.head(`cache/${key}`)).toBeUndefined();
      } finally {
        now -= 2001;
      }
    });

    it("refuses entries over the size cap and replaces an entry on a new put", async () => {
      const owner = scope();
      const key = randomUUID();
      expect(await store().put(owner, key, answer("z".repeat(200_001)), 60)).toBe(false);
      expect(await store().get(owner, key)).toBeUndefined();
      await store().put(owner, key, answer('"first"'), 60);
      await store().put(owner, key, answer('"second"'), 60);
      expect((await store().get(owner, key))?.body).toBe('"second"');
    });
  });
}

import { describe, expect, it, vi } from "vitest";
import { ApiKeyAuthenticator } from "../../../core/auth/api-key-authenticator.ts";
import { apiKeyHashKey } from "../../../core/auth/api-key-records.ts";
import { sha256Hex } from "../../../core/util/ids.ts";
import type { RecordItem, Records } from "../../../core/store/ports.ts";

/** Records holding API key lookups by hash, counting reads. */
function lookups(active: Record<string, string>) {
  const items = new Map<string, RecordItem>();
  for (const [secret, keyId] of Object.entries(active)) {
    const { pk, sk } = apiKeyHashKey(sha256Hex(secret));
    items.set(pk, { pk, sk, status: "active", principal: { organisationId: "org_1", keyId } });
  }
  let reads = 0;
  const records = {
    async get(pk: string) {
      reads++;
      return items.get(pk);
    },
  } as unknown as Records;
  return { records, items, reads: () => reads };
}

describe("ApiKeyAuthenticator", () => {
  it("resolves a secret by its sha-256, then answers from memory until the cache period ends", async () => {
    const store = lookups({ "gk-secret-a": "key_a" });
    const authenticator = new ApiKeyAuthenticator(store.records, 60_000);
    expect((await authenticator.authenticate("gk-secret-a")).keyId).toBe("key_a");
    expect((await authenticator.authenticate("gk-secret-a")).keyId).toBe("key_a");
    expect(store.reads()).toBe(1);
    await expect(authenticator.authenticate("gk-secret-b")).rejects.toMatchObject({ status: 401 });
  });

  it("forgets a revoked key at once, by its hash", async () => {
    const store = lookups({ "gk-secret-a": "key_a" });
    const authenticator = new ApiKeyAuthenticator(store.records, 60_000);
    await authenticator.authenticate("gk-secret-a");
    const hash = sha256Hex("gk-secret-a");
    store.items.delete(apiKeyHashKey(hash).pk);
    authenticator.forget(hash);
    await expect(authenticator.authenticate("gk-secret-a")).rejects.toMatchObject({ status: 401 });
  });

  it("stays correct past its memory's bound (many different secrets)", async () => {
    const store = lookups({ "gk-secret-a": "key_a" });
    const authenticator = new ApiKeyAuthenticator(store.records, 60_000);
    for (let index = 0; index < 10_050; index++) {
      await authenticator.authenticate(`gk-wrong-${index}`).catch(() => undefined);
    }
    expect((await authenticator.authenticate("gk-secret-a")).keyId).toBe("key_a");
  });

  it("honours expires_at on every request, cached or not", async () => {
    vi.useFakeTimers({ now: 1_700_000_000_000, toFake: ["Date"] });
    try {
      const store = lookups({ "gk-secret-a": "key_a" });
      const { pk } = apiKeyHashKey(sha256Hex("gk-secret-a"));
      store.items.get(pk)!.expiresAt = Date.now() / 1000 + 1;
      const authenticator = new ApiKeyAuthenticator(store.records, 60_000);
      vi.advanceTimersByTime(900);
      expect((await authenticator.authenticate("gk-secret-a")).keyId).toBe("key_a");
      vi.advanceTimersByTime(200);
      await expect(authenticator.authenticate("gk-secret-a")).rejects.toMatchObject({ status: 401 });
      expect(store.reads()).toBe(1); // refused from the cache, without a store read
    } finally {
      vi.useRealTimers();
    }
  });
});

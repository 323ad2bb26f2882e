import { unauthorized } from "../http/errors.ts";
import { sha256Hex } from "../util/ids.ts";
import type { Records } from "../store/ports.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { readApiKeyLookup } from "./api-key-records.ts";
import type { Principal } from "./principal.ts";

/** A verified key: its principal, and its `expires_at` (ms), checked on every request: a cached key must not outlive it. */
interface KnownKey {
  principal: Principal;
  expiresAtMs?: number;
}

/** Misses are cached briefly so a flood of bad keys cannot turn into a flood of store reads. */
const NEGATIVE_CACHE_MS = 2_000;
const MAX_CACHE_ENTRIES = 10_000;

/** Approximate heap held by a cached principal or key (computed on a miss only, after a store read). */
export const principalBytes = (hash: string, principal: object | null): number =>
  256 + (hash.length + JSON.stringify(principal).length) * 2;

/**
 * Resolves `x-gateway-api-key` secrets to principals: sha256 of the secret, one store read, then cached for
 * a short time so warm requests cost no read. Revocation takes effect within the cache period; expiry at once,
 * cached or not.
 */
export class ApiKeyAuthenticator {
  /** Verified keys (null: no such active key) by the hash of the secret: never keyed by the secret itself. */
  private readonly cache: TtlCache<string, KnownKey | null>;
  private readonly records: Records;

  constructor(records: Records, ttlMs: number) {
    this.records = records;
    this.cache = new TtlCache<string, KnownKey | null>({
      ttlMs,
      maxEntries: MAX_CACHE_ENTRIES,
      sizeOf: principalBytes,
    });
  }

  async authenticate(secret: string): Promise<Principal> {
    const hash = sha256Hex(secret);
    const now = Date.now();
    let known = this.cache.get(hash);
    if (known === undefined) {
      known = (await this.load(hash, now)) ?? null;
      this.cache.set(hash, known, known ? undefined : NEGATIVE_CACHE_MS);
    }
    if (!known || (known.expiresAtMs !== undefined && known.expiresAtMs <= now))
      throw unauthorized("Invalid API key. Send a valid key in the x-gateway-api-key header.");
    return known.principal;
  }

  /** Drops a cached key at once (after revoke or rotate in this process). */
  forget(secretHash: string): void {
    this.cache.delete(secretHash);
  }

  private async load(hash: string, now: number): Promise<KnownKey | undefined> {
    const lookup = await readApiKeyLookup(this.records, hash);
    if (lookup?.status !== "active") return undefined;
    const expiresAtMs = typeof lookup.expiresAt === "number" ? lookup.expiresAt * 1000 : undefined;
    if (expiresAtMs !== undefined && expiresAtMs <= now) return undefined;
    return { principal: lookup.principal, expiresAtMs };
  }
}

import { unauthorized } from "../http/errors.ts";
import { sha256Hex } from "../ids.ts";
import type { Records } from "../store/ports.ts";
import { readApiKeyLookup } from "./api-key-records.ts";
import type { Principal } from "./principal.ts";

interface CacheEntry {
  principal: Principal | undefined;
  until: number;
  /** The key's `expires_at` in ms, checked on every request: a cached key must not outlive it. */
  expiresAtMs?: number;
}

/** Misses are cached briefly so a flood of bad keys cannot turn into a flood of store reads. */
const NEGATIVE_CACHE_MS = 2_000;
const MAX_CACHE_ENTRIES = 10_000;

/**
 * Resolves `x-gateway-api-key` secrets to principals: sha256 of the secret, one store read, then cached for
 * a short time so warm requests cost no read. Revocation takes effect within the cache period; expiry at once,
 * cached or not.
 */
export class ApiKeyAuthenticator {
  private readonly cache = new Map<string, CacheEntry>();
  /**
   * The hashes of secrets seen recently. Hashing is a pure function, so remembering it changes nothing but
   * the cost: measured at ~9 µs per request on the hot path (OpenSSL, cold between requests), against a map
   * lookup on a string V8 has hashed already. Bounded like the principal cache.
   */
  private readonly hashes = new Map<string, string>();
  private readonly records: Records;
  private readonly ttlMs: number;

  constructor(records: Records, ttlMs: number) {
    this.records = records;
    this.ttlMs = ttlMs;
  }

  async authenticate(secret: string): Promise<Principal> {
    const hash = this.hashOf(secret);
    const now = Date.now();
    const cached = this.cache.get(hash);
    let entry: CacheEntry;
    if (cached && cached.until > now) {
      entry = cached;
    } else {
      entry = await this.load(hash, now);
      if (this.cache.size >= MAX_CACHE_ENTRIES) this.cache.clear();
      this.cache.set(hash, entry);
    }
    if (!entry.principal || (entry.expiresAtMs !== undefined && entry.expiresAtMs <= now))
      throw unauthorized("Invalid API key. Send a valid key in the x-gateway-api-key header.");
    return entry.principal;
  }

  private hashOf(secret: string): string {
    let hash = this.hashes.get(secret);
    if (hash === undefined) {
      hash = sha256Hex(secret);
      if (this.hashes.size >= MAX_CACHE_ENTRIES) this.hashes.clear();
      this.hashes.set(secret, hash);
    }
    return hash;
  }

  /** Drops a cached key at once (after revoke or rotate in this process). */
  forget(secretHash: string): void {
    this.cache.delete(secretHash);
  }

  private async load(hash: string, now: number): Promise<CacheEntry> {
    const lookup = await readApiKeyLookup(this.records, hash);
    const missing = { principal: undefined, until: now + NEGATIVE_CACHE_MS };
    if (lookup?.status !== "active") return missing;
    const expiresAtMs = typeof lookup.expiresAt === "number" ? lookup.expiresAt * 1000 : undefined;
    if (expiresAtMs !== undefined && expiresAtMs <= now) return missing;
    return { principal: lookup.principal, until: now + this.ttlMs, expiresAtMs };
  }
}

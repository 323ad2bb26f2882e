import { unauthorized } from "../http/errors.ts";
import { sha256Hex } from "../ids.ts";
import type { Records } from "../store/ports.ts";
import { TtlCache } from "../util/ttl-cache.ts";
import { readApiKeyLookup } from "./api-key-records.ts";
import type { Principal } from "./principal.ts";

/** Misses are cached briefly so a flood of bad keys cannot turn into a flood of store reads. */
const NEGATIVE_CACHE_MS = 2_000;
const MAX_CACHE_ENTRIES = 10_000;

/** Approximate heap held by a cached principal (computed on a miss only, after a store read). */
export const principalBytes = (hash: string, principal: Principal | null): number =>
  256 + (hash.length + JSON.stringify(principal).length) * 2;

/**
 * Resolves `x-gateway-api-key` secrets to principals: sha256 of the secret, one store read, then cached for
 * a short time so warm requests cost no read. Revocation takes effect within the cache period.
 */
export class ApiKeyAuthenticator {
  /** Principals (null: no such active key) by the hash of the secret: never keyed by the secret itself. */
  private readonly cache: TtlCache<string, Principal | null>;
  private readonly records: Records;

  constructor(records: Records, ttlMs: number) {
    this.records = records;
    this.cache = new TtlCache({ ttlMs, maxEntries: MAX_CACHE_ENTRIES, sizeOf: principalBytes });
  }

  async authenticate(secret: string): Promise<Principal> {
    const hash = sha256Hex(secret);
    let principal = this.cache.get(hash);
    if (principal === undefined) {
      principal = (await this.load(hash, Date.now())) ?? null;
      this.cache.set(hash, principal, principal ? undefined : NEGATIVE_CACHE_MS);
    }
    if (!principal) throw unauthorized("Invalid API key. Send a valid key in the x-gateway-api-key header.");
    return principal;
  }

  /** Drops a cached key at once (after revoke or rotate in this process). */
  forget(secretHash: string): void {
    this.cache.delete(secretHash);
  }

  private async load(hash: string, now: number): Promise<Principal | undefined> {
    const lookup = await readApiKeyLookup(this.records, hash);
    if (lookup?.status !== "active") return undefined;
    if (lookup.expiresAt !== undefined && lookup.expiresAt * 1000 <= now) return undefined;
    return lookup.principal;
  }
}

/**
 * The one in-process cache: least-recently-used, entries expire after a time to live, and it is bounded both
 * by entries and by bytes (an approximate size per entry), so a few huge values cannot hold the heap.
 *
 * Keys must never be secrets: key by a hash of an API key or token, not the key itself (a heap dump or a
 * debugger would show them).
 */
export interface TtlCacheOptions<K, V> {
  /** How long an entry stays fresh; Infinity for caches refreshed or invalidated by their owner. */
  ttlMs: number;
  maxEntries: number;
  /** Upper bound of the sum of `sizeOf` over the entries. */
  maxBytes?: number;
  /** Approximate bytes an entry holds (default: the key's characters plus a fixed overhead). */
  sizeOf?: (key: K, value: V) => number;
  now?: () => number;
}

interface Entry<V> {
  value: V;
  until: number;
  bytes: number;
}

/** Fixed cost of an entry (the Map slot and the entry object) in the default size estimate. */
const ENTRY_OVERHEAD_BYTES = 96;
const DEFAULT_MAX_BYTES = 32 * 1024 * 1024;

export const approximateKeyBytes = (key: unknown): number =>
  ENTRY_OVERHEAD_BYTES + (typeof key === "string" ? key.length * 2 : 16);

export class TtlCache<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #sizeOf: (key: K, value: V) => number;
  readonly #now: () => number;
  #bytes = 0;
  /**
   * The key made recent last: reading it again needs no re-insert (each re-insert leaves a deleted slot the Map
   * reclaims by rebuilding its table, which for a long-lived Map means garbage promoted out of the young
   * generation on every request of a hot key).
   */
  #newest: K | undefined;

  constructor(options: TtlCacheOptions<K, V>) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#sizeOf = options.sizeOf ?? approximateKeyBytes;
    this.#now = options.now ?? Date.now;
  }

  /**
   * The value while fresh, else undefined. A read makes the entry most recent once the cache is half full: the
   * order only decides evictions, which start when it is full, and below half a re-insert per read bought nothing
   * (a request reads a few caches, the header-name one once per header: 1% of a request's CPU).
   */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.until !== Number.POSITIVE_INFINITY && entry.until <= this.#now()) {
      this.#remove(key, entry);
      return undefined;
    }
    if (key !== this.#newest && this.#nearlyFull()) {
      this.#entries.delete(key);
      this.#entries.set(key, entry);
      this.#newest = key;
    }
    return entry.value;
  }

  #nearlyFull(): boolean {
    return this.#entries.size * 2 >= this.#maxEntries || this.#bytes * 2 >= this.#maxBytes;
  }

  has(key: K): boolean {
    return this.get(key) !== undefined;
  }

  /** Stores a value for the cache's time to live, or `ttlMs` when given; an entry larger than the byte bound is not kept. */
  set(key: K, value: V, ttlMs = this.#ttlMs): void {
    const previous = this.#entries.get(key);
    if (previous) this.#remove(key, previous);
    const bytes = this.#sizeOf(key, value);
    if (bytes > this.#maxBytes) return;
    this.#entries.set(key, { value, until: this.#now() + ttlMs, bytes });
    this.#newest = key;
    this.#bytes += bytes;
    while (this.#entries.size > this.#maxEntries || this.#bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next().value as K;
      this.#remove(oldest, this.#entries.get(oldest)!);
    }
  }

  delete(key: K): void {
    const entry = this.#entries.get(key);
    if (entry) this.#remove(key, entry);
  }

  /** Drops an entry only while it still holds `value` (a failed load must not drop a newer one). */
  deleteIf(key: K, value: V): void {
    const entry = this.#entries.get(key);
    if (entry?.value === value) this.#remove(key, entry);
  }

  /** Drops every entry whose key matches (e.g. all of one organisation's). */
  deleteWhere(matches: (key: K) => boolean): void {
    for (const [key, entry] of this.#entries) if (matches(key)) this.#remove(key, entry);
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
    this.#newest = undefined;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** The approximate bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  #remove(key: K, entry: Entry<V>): void {
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
    if (key === this.#newest) this.#newest = undefined;
  }
}

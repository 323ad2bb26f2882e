/** A small least-recently-used map (Map keeps insertion order: re-inserting on read makes it recent). */
export class Lru<K, V> {
  private readonly entries = new Map<K, V>();
  readonly capacity: number;
  /**
   * The key made recent last: reading it again needs no re-insert. Each re-insert leaves a deleted slot that the
   * Map reclaims by rebuilding its table, and a table rebuilt for a long-lived Map outlives the young generation:
   * with one hot key (one custom host) that was ~140 bytes promoted per request.
   */
  private newest: K | undefined;

  constructor(capacity: number) {
    this.capacity = capacity;
  }

  get(key: K): V | undefined {
    const value = this.entries.get(key);
    if (value === undefined || key === this.newest) return value;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    return value;
  }

  set(key: K, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    this.newest = key;
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as K);
  }

  get size(): number {
    return this.entries.size;
  }
}

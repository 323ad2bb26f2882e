/**
 * Short-lived values per organisation and workspace, for lookups made on every request. Two map levels
 * instead of one `${org}/${workspace}` key: the ids come from the cached principal, the same string objects
 * each time, so V8 reuses their hashes, where a joined key is a new string to build and hash per request.
 */
export class PerOrganisationCache<V> {
  readonly #byOrganisation = new Map<string, Map<string, { value: V; until: number }>>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  #entries = 0;

  constructor(ttlMs: number, maxEntries = 10_000) {
    this.#ttlMs = ttlMs;
    this.#maxEntries = maxEntries;
  }

  /** The value while fresh, else undefined. */
  get(organisationId: string, workspaceId: string, now: number): V | undefined {
    const entry = this.#byOrganisation.get(organisationId)?.get(workspaceId);
    return entry && entry.until > now ? entry.value : undefined;
  }

  set(organisationId: string, workspaceId: string, value: V, now: number): void {
    let workspaces = this.#byOrganisation.get(organisationId);
    if (!workspaces?.has(workspaceId)) {
      if (this.#entries >= this.#maxEntries) {
        this.clear();
        workspaces = undefined;
      }
      this.#entries++;
    }
    if (!workspaces) {
      workspaces = new Map();
      this.#byOrganisation.set(organisationId, workspaces);
    }
    workspaces.set(workspaceId, { value, until: now + this.#ttlMs });
  }

  /** Drops one entry if it still holds `value` (a failed load must not drop a newer one). */
  deleteIf(organisationId: string, workspaceId: string, value: V): void {
    const workspaces = this.#byOrganisation.get(organisationId);
    if (workspaces?.get(workspaceId)?.value !== value) return;
    workspaces.delete(workspaceId);
    this.#entries--;
  }

  forget(organisationId: string): void {
    this.#entries -= this.#byOrganisation.get(organisationId)?.size ?? 0;
    this.#byOrganisation.delete(organisationId);
  }

  clear(): void {
    this.#byOrganisation.clear();
    this.#entries = 0;
  }
}

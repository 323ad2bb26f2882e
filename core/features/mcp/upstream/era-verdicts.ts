import type { Client, PriorDiscovery } from "@modelcontextprotocol/client";

/**
 * Which protocol era each upstream speaks, learnt from one connection and adopted by the next (the SDK's
 * `connect(transport, { prior })`): a 2026-07-28 upstream's `server/discover` answer lets later clients connect
 * with no round trip; a 2025-era verdict skips the probe and goes straight to `initialize`. Keyed by the
 * authorization context (upstream URL + credential hash), since an advertisement is what the server told that
 * credential. Verdicts are dated and dropped after HORIZON_MS, because a stale legacy verdict would otherwise
 * never notice an upgraded upstream; a stale modern one fails at connect and is forgotten there.
 */
const HORIZON_MS = 10 * 60_000;
const MAX_ENTRIES = 1000;

class EraVerdicts {
  readonly #entries = new Map<string, { verdict: PriorDiscovery; storedAt: number }>();

  get(key: string): PriorDiscovery | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (Date.now() - entry.storedAt >= HORIZON_MS) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.verdict;
  }

  /** The verdict a connected client reached: its discover result (modern) or the legacy era. */
  remember(key: string, client: Client): void {
    const discover = client.getDiscoverResult();
    const verdict: PriorDiscovery | undefined = discover
      ? { kind: "modern", discover }
      : client.getProtocolEra() === "legacy"
        ? { kind: "legacy" }
        : undefined;
    if (!verdict) return;
    if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(key, { verdict, storedAt: Date.now() });
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }
}

export const eraVerdicts = new EraVerdicts();

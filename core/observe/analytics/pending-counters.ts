import type { Counters } from "../../store/ports.ts";

/**
 * Sums analytics counter deltas in memory and writes one add per counter when flushed, so a busy process
 * writes each hourly/daily aggregate about once per interval instead of once per request. With an interval of
 * 0 nothing is written until `flush` (the recorder then flushes after every log). Readers flush first, so what
 * a process reports includes everything it has counted.
 */
export class PendingCounters {
  private pending = new Map<string, { amount: number; expiresAt: number }>();
  private timer: NodeJS.Timeout | undefined;
  private readonly counters: Counters;
  private readonly intervalMs: number;

  constructor(counters: Counters, intervalMs: number) {
    this.counters = counters;
    this.intervalMs = intervalMs;
  }

  add(key: string, amount: number, expiresAt: number): void {
    if (!amount) return;
    const entry = this.pending.get(key);
    if (entry) entry.amount += amount;
    else this.pending.set(key, { amount, expiresAt });
    if (this.intervalMs > 0 && !this.timer) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.flush().catch((error) => console.error("analytics flush failed", error));
      }, this.intervalMs);
      this.timer.unref();
    }
  }

  /** Writes what is pending (one add per counter). Deltas of a failed write are put back for the next flush. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const failures: unknown[] = [];
    await Promise.all(
      [...batch].map(async ([key, { amount, expiresAt }]) => {
        try {
          await this.counters.add(key, amount, { expiresAt });
        } catch (error) {
          failures.push(error);
          this.add(key, amount, expiresAt);
        }
      }),
    );
    if (failures.length > 0) throw failures[0];
  }

  get immediate(): boolean {
    return this.intervalMs === 0;
  }
}

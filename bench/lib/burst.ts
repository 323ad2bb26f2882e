import { Agent } from "node:http";
import { percentile } from "./stats.ts";
import { timeStream } from "./ttfb.ts";

/**
 * A burst of new streams: `streams` streamed requests sent at once, each on a connection of its own (no
 * keep-alive: every one is a new TCP connection the server accepts, parses and answers), against a mock that
 * paces its chunks (`/paced-50/`: 20 chunks 50 ms apart, a stream lasts about a second). What a server pays to
 * take on many new streams at the same moment shows in their time to first byte: the last one accepted waits
 * for every other's setup. Measured `bursts` times, a second apart; each burst's p50 and p99, and the medians.
 */
export interface BurstResult {
  streams: number;
  bursts: number;
  /** Median over the bursts of each burst's time-to-first-byte p50 / p99, ms. */
  ttfbP50: number;
  ttfbP99: number;
  /** Median over the bursts of each burst's time to the last byte p50, ms. */
  ttlbP50: number;
  /** Every burst's TTFB p50, ms (to see the spread). */
  ttfbP50s: number[];
  errors: number;
}

export async function measureBurst(options: {
  url: string;
  headers: Record<string, string>;
  body: string;
  streams: number;
  bursts: number;
  /** Whether a stream's last 64 bytes show it ended well (default: OpenAI's `[DONE]`). */
  done?: (tail: string) => boolean;
}): Promise<BurstResult> {
  const url = new URL(options.url);
  const p50s: number[] = [];
  const p99s: number[] = [];
  const ttlbs: number[] = [];
  let errors = 0;
  for (let burst = 0; burst < options.bursts; burst++) {
    // A fresh agent per burst, no keep-alive, no socket limit: every stream opens its own connection now.
    const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
    const samples = await Promise.all(
      Array.from({ length: options.streams }, () =>
        timeStream(url, agent, { ...options.headers, connection: "close" }, options.body, options.done),
      ),
    );
    agent.destroy();
    const good = samples.filter((sample) => sample.ok);
    errors += samples.length - good.length;
    p50s.push(
      percentile(
        good.map((s) => s.ttfb),
        50,
      ),
    );
    p99s.push(
      percentile(
        good.map((s) => s.ttfb),
        99,
      ),
    );
    ttlbs.push(
      percentile(
        good.map((s) => s.ttlb),
        50,
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  return {
    streams: options.streams,
    bursts: options.bursts,
    ttfbP50: median(p50s),
    ttfbP99: median(p99s),
    ttlbP50: median(ttlbs),
    ttfbP50s: p50s.map((value) => Math.round(value * 10) / 10),
    errors,
  };
}

function median(values: number[]): number {
  const sorted = values.filter((value) => !Number.isNaN(value)).sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.floor((sorted.length - 1) / 2)]!;
}

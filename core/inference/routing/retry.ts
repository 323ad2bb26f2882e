import type { RetryPolicy } from "./config.ts";

/**
 * Retry timing: exponential backoff with jitter, or the provider's own hint (`retry-after-ms`,
 * `x-ms-retry-after-ms`, `retry-after` in seconds or as an HTTP date) when the policy asks for it, within a
 * cap on the total wait per target. A hint longer than what is left of the cap ends the retries at once
 * (waiting less than asked would just fail again).
 */
export const RETRY_TIMING = {
  /** First backoff (before jitter); doubles each retry. */
  baseMs: 250,
  /** Longest single backoff. */
  maxDelayMs: 10_000,
  /** Most time spent waiting between the calls to one target. */
  maxTotalWaitMs: 60_000,
} as const;

/** The provider's retry hint in ms, if any. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  for (const name of ["retry-after-ms", "x-ms-retry-after-ms"]) {
    const value = headers.get(name);
    if (value !== null && value.trim() !== "") {
      const ms = Number(value);
      if (Number.isFinite(ms) && ms >= 0) return Math.ceil(ms);
    }
  }
  const value = headers.get("retry-after");
  if (value === null || value.trim() === "") return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? Math.ceil(seconds * 1000) : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Backoff before retry number `retry` (1-based): base * 2^(retry-1), capped, with "equal jitter" (50-100%). */
export function backoffMs(retry: number, random: () => number = Math.random): number {
  const nominal = Math.min(RETRY_TIMING.maxDelayMs, RETRY_TIMING.baseMs * 2 ** (retry - 1));
  return Math.round(nominal / 2 + (nominal / 2) * random());
}

/**
 * How long to wait before retry number `retry`, or undefined when the policy says not to retry: the status is
 * not retried, attempts are used up, or the wait would go over the cap.
 */
export function nextRetryDelay(
  policy: RetryPolicy | undefined,
  retry: number,
  status: number,
  headers: Headers | undefined,
  waitedMs: number,
  random: () => number = Math.random,
): number | undefined {
  if (!policy || retry > policy.attempts || !policy.onStatusCodes.includes(status)) return undefined;
  const hinted = policy.useRetryAfterHeader ? retryAfterMs(headers) : undefined;
  const delay = hinted ?? backoffMs(retry, random);
  return waitedMs + delay > RETRY_TIMING.maxTotalWaitMs ? undefined : delay;
}

/** Resolves after `ms`, or rejects at once when the signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

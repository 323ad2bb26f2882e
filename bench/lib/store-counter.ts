import type { Stores } from "../../core/store/ports.ts";

/**
 * A counting wrapper around the storage ports: every call of a Records, Counters, Blobs, Queue or Secrets
 * method is counted by name and classed as a read, a write or other (no I/O, or crypto).
 */

type Kind = "read" | "write" | "other";

/** What each port method costs on AWS: reads and writes by port. `other` is neither (no I/O, or crypto). */
export const METHOD_KINDS: Record<string, Record<string, Kind>> = {
  records: { get: "read", query: "read", put: "write", update: "write", delete: "write" },
  counters: { get: "read", getMany: "read", add: "write", delete: "write" },
  blobs: { get: "read", head: "read", list: "read", put: "write", delete: "write", signedUrl: "other" },
  queue: { receive: "read", send: "write", sendBatch: "write", ack: "write", release: "write" },
  secrets: { encrypt: "other", decrypt: "other" },
};

export interface StoreOpCounts {
  /** "records.get" -> calls. */
  byMethod: Record<string, number>;
  reads: number;
  writes: number;
  other: number;
}

export interface StoreCounter {
  counts(): StoreOpCounts;
  reset(): void;
}

/**
 * Replaces each port method of `stores` with a counting wrapper, in place (the ports are shared by reference
 * across services, so wrapping a copy would miss callers that captured the original objects).
 */
export function instrumentStores(stores: Stores): StoreCounter {
  let byMethod: Record<string, number> = {};
  for (const [port, methods] of Object.entries(METHOD_KINDS)) {
    const target = (stores as unknown as Record<string, Record<string, unknown>>)[port];
    if (!target) continue;
    for (const method of Object.keys(methods)) {
      const original = target[method];
      if (typeof original !== "function") continue;
      const name = `${port}.${method}`;
      target[method] = function (this: unknown, ...args: unknown[]) {
        byMethod[name] = (byMethod[name] ?? 0) + 1;
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      };
    }
  }
  return {
    counts() {
      let reads = 0;
      let writes = 0;
      let other = 0;
      for (const [name, count] of Object.entries(byMethod)) {
        const [port, method] = name.split(".") as [string, string];
        const kind = METHOD_KINDS[port]?.[method] ?? "other";
        if (kind === "read") reads += count;
        else if (kind === "write") writes += count;
        else other += count;
      }
      return { byMethod: { ...byMethod }, reads, writes, other };
    },
    reset() {
      byMethod = {};
    },
  };
}


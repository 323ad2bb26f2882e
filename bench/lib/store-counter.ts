import { layoutLog } from "../../core/logs/log-layout.ts";
import { logFacts } from "../../core/logs/log-search.ts";
import type { LogEntry } from "../../core/logs/log-sink.ts";
import { indexEntries } from "../../core/logs/index-items.ts";
import type { Stores } from "../../core/store/ports.ts";

/**
 * A counting wrapper around the storage ports: every call of a Records, Counters, Blobs, Queue or Secrets
 * method is counted by name and classed as a read, a write or other (no I/O, or crypto).
 */

type Kind = "read" | "write" | "other";

/** What each port method costs on AWS: reads and writes by port. `other` is neither (no I/O, or crypto). */
export const METHOD_KINDS: Record<string, Record<string, Kind>> = {
  records: { get: "read", query: "read", put: "write", update: "write", delete: "write" },
  // Request logs, where the platform's log sink keeps them apart from `records` (locally, logs.db), and the log
  // sink's own calls: `write` stores a log with its search index (on AWS one BatchWriteItem), `search` reads.
  logs: { get: "read", query: "read", put: "write", update: "write", delete: "write", write: "write", search: "read" },
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
  /**
   * DynamoDB write request units these calls would cost: 1 per started KB of the item (JSON size, a slight
   * overestimate of DynamoDB's size), twice when the item carries gsi1 keys (the index projects ALL
   * attributes, SST's default, so the index write is as large). Counter adds: 1 each. A request log: its record
   * and each of its search index items as the AWS log sink writes them (core/logs/index-items.ts).
   */
  writeUnits: number;
  /** Bytes of the records written (records.put), summed. */
  recordBytes: number;
}

export interface StoreCounter {
  counts(): StoreOpCounts;
  reset(): void;
}

/**
 * Replaces each port method of `stores` with a counting wrapper, in place (the ports are shared by reference
 * across services, so wrapping a copy would miss callers that captured the original objects). `sizes: false`
 * skips serialising written items to size them (keeps the wrapper negligible inside a load test).
 */
export function instrumentStores(stores: Stores, options: { sizes?: boolean } = {}): StoreCounter {
  const sizes = options.sizes ?? true;
  let byMethod: Record<string, number> = {};
  let writeUnits = 0;
  let recordBytes = 0;
  const unitsOf = (name: string, args: unknown[]) => {
    if ((name === "records.put" || name === "logs.put") && sizes) {
      const item = args[0] as Record<string, unknown>;
      const bytes = Buffer.byteLength(JSON.stringify(item));
      recordBytes += bytes;
      writeUnits += Math.ceil(bytes / 1024) * (item.gsi1pk ? 2 : 1);
    } else if (name === "records.update" || name === "logs.update") {
      writeUnits += 1;
    } else if (
      name === "records.delete" ||
      name === "logs.delete" ||
      name === "counters.add" ||
      name === "counters.delete"
    ) {
      writeUnits += 1;
    }
  };
  const units = (item: unknown) => {
    const bytes = Buffer.byteLength(JSON.stringify(item));
    return { bytes, units: Math.ceil(bytes / 1024) * ((item as { gsi1pk?: unknown }).gsi1pk ? 2 : 1) };
  };
  // The log sink's writes, counted once per log whichever store the platform keeps them in.
  const sink = stores.logSink as unknown as Record<string, (...args: unknown[]) => unknown>;
  for (const method of ["write", "search"]) {
    const original = sink[method]!;
    sink[method] = function (this: unknown, ...args: unknown[]) {
      byMethod[`logs.${method}`] = (byMethod[`logs.${method}`] ?? 0) + 1;
      if (method === "write" && sizes) {
        const entry = args[0] as LogEntry;
        const { item } = layoutLog(entry);
        const record = units(item);
        recordBytes += record.bytes;
        writeUnits += record.units;
        for (const index of indexEntries(logFacts(entry.log), item.ttl)) writeUnits += units(index).units;
      }
      return original.apply(this, args);
    };
  }
  for (const [port, methods] of Object.entries(METHOD_KINDS)) {
    // The log sink's records, where they are not `records` itself (locally: logs.db, written by the storage thread).
    const target = (
      port === "logs"
        ? stores.logSink.records === stores.records
          ? undefined
          : stores.logSink.records
        : (stores as unknown as Record<string, unknown>)[port]
    ) as Record<string, unknown> | undefined;
    if (!target) continue;
    for (const method of Object.keys(methods)) {
      if (port === "logs" && (method === "write" || method === "search")) continue;
      const original = target[method];
      if (typeof original !== "function") continue;
      const name = `${port}.${method}`;
      target[method] = function (this: unknown, ...args: unknown[]) {
        byMethod[name] = (byMethod[name] ?? 0) + 1;
        unitsOf(name, args);
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
      return { byMethod: { ...byMethod }, reads, writes, other, writeUnits, recordBytes };
    },
    reset() {
      byMethod = {};
      writeUnits = 0;
      recordBytes = 0;
    },
  };
}

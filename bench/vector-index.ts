import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { openDatabase } from "../core/platform/local/sqlite.ts";
import { SqliteVectorIndex } from "../core/platform/local/sqlite-vector-index.ts";
import { WriteBatcher } from "../core/platform/local/write-batcher.ts";
import { parseFlags } from "./lib/cli.ts";

/**
 * The semantic cache's local vector index (core/platform/local/sqlite-vector-index.ts) with `--entries` entries
 * (default 100000) in ONE scope, per dimension (`--dimensions=384,1536`). Vectors are random unit vectors: the
 * hardest case for an HNSW graph (real embeddings cluster), so build and query figures are upper bounds.
 *
 * Measured, per dimension, on a fresh database file:
 * - insert: `add` through the port while the scope is not in memory (SQLite only), per entry, batched as
 *   concurrent requests are (one commit per write batch);
 * - load: after a restart, the first query of the scope and how long until every entry is in the graph, the
 *   event-loop delay meanwhile (p99 and longest: slices yield), and the resident memory the graph adds;
 * - add (loaded): `add` when the scope's graph is in memory (SQLite + graph insert);
 * - query: `nearest` for 1000 stored vectors, each nudged (similarity ~0.99): p50 / p99 latency and how often
 *   the right entry came back.
 *
 * `node bench/vector-index.ts [--entries=100000] [--dimensions=384,1536]` prints one JSON line per dimension.
 */

const flags = parseFlags(process.argv.slice(2));
const ENTRIES = Number(flags.entries ?? 100_000);
const DIMENSIONS = (flags.dimensions ?? "384,1536").split(",").map(Number);
const QUERIES = 1000;
const HOUR = 3_600_000;

function unitVector(dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  let norm = 0;
  for (let i = 0; i < dimensions; i++) {
    vector[i] = Math.random() - 0.5;
    norm += vector[i]! * vector[i]!;
  }
  norm = Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i]! /= norm;
  return vector;
}

function nudged(vector: Float32Array): Float32Array {
  const noise = unitVector(vector.length);
  return vector.map((value, i) => value + 0.1 * noise[i]!);
}

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
const round = (value: number, digits = 3) => Number(value.toFixed(digits));
const rssMb = () => process.memoryUsage().rss / 1e6;

function open(file: string) {
  const db = openDatabase(file);
  const writes = new WriteBatcher(db);
  const index = new SqliteVectorIndex(db, writes, { maxEntries: ENTRIES * 2, maxEntriesPerScope: ENTRIES * 2 });
  return {
    index,
    close() {
      index.close();
      writes.flush();
      db.close();
    },
  };
}

async function benchDimension(dimensions: number) {
  const dir = mkdtempSync(join(tmpdir(), "bench-vectors-"));
  const file = join(dir, "gateway.db");
  try {
    // Keep a sample of the stored vectors to query with; the rest are generated and dropped.
    const samples = new Map<number, Float32Array>();
    const sampleEvery = Math.max(1, Math.floor(ENTRIES / QUERIES));
    let store = open(file);
    const batch = 500;
    let insertMs = 0;
    for (let start = 0; start < ENTRIES; start += batch) {
      const vectors = Array.from({ length: Math.min(batch, ENTRIES - start) }, () => unitVector(dimensions));
      vectors.forEach((vector, i) => {
        if ((start + i) % sampleEvery === 0) samples.set(start + i, vector);
      });
      const began = performance.now();
      await Promise.all(
        vectors.map((vector, i) => store.index.add("scope", `e${start + i}`, vector, Date.now() + HOUR)),
      );
      insertMs += performance.now() - began;
    }
    store.close();
    const fileMb = statSync(file).size / 1e6;

    // Restart: the graph is built from the table on the first query.
    store = open(file);
    const stalls = monitorEventLoopDelay({ resolution: 1 });
    stalls.enable();
    const rssBefore = rssMb();
    const loadStart = performance.now();
    const [firstId, firstVector] = [...samples.entries()].at(-1)!;
    const first = await store.index.nearest("scope", firstVector, 0.95);
    const firstQueryMs = performance.now() - loadStart;
    while (store.index.loadedEntries("scope") < ENTRIES) await sleep(50);
    const loadMs = performance.now() - loadStart;
    stalls.disable();
    global.gc?.();
    const graphMb = rssMb() - rssBefore;

    const latencies: number[] = [];
    let found = 0;
    for (const [id, vector] of samples) {
      const query = nudged(vector);
      const began = performance.now();
      const hit = await store.index.nearest("scope", query, 0.9);
      latencies.push(performance.now() - began);
      if (hit?.id === `e${id}`) found++;
    }
    latencies.sort((a, b) => a - b);

    const loadedAdds = 1000;
    const addStart = performance.now();
    await Promise.all(
      Array.from({ length: loadedAdds }, (_, i) =>
        store.index.add("scope", `extra${i}`, unitVector(dimensions), Date.now() + HOUR),
      ),
    );
    const loadedAddMs = (performance.now() - addStart) / loadedAdds;
    store.close();

    return {
      dimensions,
      entries: ENTRIES,
      insertMsPerEntry: round(insertMs / ENTRIES),
      databaseMb: round(fileMb, 0),
      firstQueryMs: round(firstQueryMs, 1),
      firstQueryFoundNewest: first?.id === `e${firstId}`,
      loadSeconds: round(loadMs / 1000, 1),
      stallP99Ms: round(stalls.percentile(99) / 1e6, 1),
      longestStallMs: round(stalls.max / 1e6, 1),
      graphRssMb: round(graphMb, 0),
      addLoadedMsPerEntry: round(loadedAddMs),
      queryP50Ms: round(percentile(latencies, 0.5)),
      queryP99Ms: round(percentile(latencies, 0.99)),
      recall: round(found / samples.size),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const dimensions of DIMENSIONS) console.log(JSON.stringify(await benchDimension(dimensions)));

import { createRequire } from "node:module";
import type { Index as HnswIndex } from "usearch";

/**
 * The in-memory HNSW graphs (usearch) that the semantic cache's vector indexes of the Node platforms keep per
 * scope and dimension (core/platform/local/sqlite-vector-index.ts, core/platform/mysql/mysql-vector-index.ts):
 * both propose candidates from a graph and score them exactly against the vectors they store.
 */
export type { HnswIndex };
type Usearch = typeof import("usearch").default;

let usearch: Usearch | undefined;

/**
 * How the Node vector indexes (SQLite, MySQL) use their graphs: candidates the graph proposes per query (each is
 * checked and scored exactly against its stored row), rows read per statement while loading a scope (newest
 * first), rows the first query of a scope always finds loaded (its newest, however slow the machine or usearch's
 * first load), and scopes kept in memory (least recently queried dropped first; the entry limits bound the memory,
 * this the graph count).
 */
export const GRAPH_USE = { candidates: 8, loadPageRows: 64, firstSliceRows: 32, maxLoadedScopes: 1024 } as const;

/**
 * A graph for `dimensions`, cosine metric. int8 keeps memory at a quarter of float32 (candidates are
 * re-scored exactly); expansion_search is wider than usearch's default so near-duplicates stay findable at
 * 100k entries (bench/README.md). usearch itself loads on the first graph.
 */
export function newHnswGraph(dimensions: number): HnswIndex {
  usearch ??= loadUsearch();
  const { Index, MetricKind, ScalarKind } = usearch;
  return new Index({
    dimensions,
    metric: MetricKind.Cos,
    quantization: ScalarKind.I8,
    connectivity: 16,
    expansion_add: 64,
    expansion_search: 128,
    multi: false,
  });
}

/** Entries in a scope's graphs, whatever their dimensions (tests and the benchmark read it). */
export function graphEntries(byDimension: ReadonlyMap<number, HnswIndex> | undefined): number {
  let entries = 0;
  for (const graph of byDimension?.values() ?? []) entries += graph.size();
  return entries;
}

/**
 * usearch's CommonJS build, through require: its ES module build finds its native addon from the caller's
 * stack, which fails from a bundle or `node -e`; the CommonJS one uses its own folder. Not bundled (a native
 * addon).
 */
function loadUsearch(): Usearch {
  return createRequire(import.meta.url)("usearch") as Usearch;
}

/** Stored float32 bytes (native-endian) as a vector, copied into a buffer of its own so it is aligned. */
export function float32FromBytes(bytes: Uint8Array): Float32Array {
  return new Float32Array(Uint8Array.prototype.slice.call(bytes).buffer);
}

import type { VectorIndex } from "../../store/vector-index.ts";
import { checkEntry, checkId, checkQuery, checkScope, cosineSimilarity } from "../../store/vector-rules.ts";
import { float32FromBytes, GRAPH_USE, graphEntries, type HnswIndex, newHnswGraph } from "../node/hnsw-graph.ts";
import { type SqliteDatabase, sqlite } from "./sqlite.ts";
import type { WriteBatcher } from "./write-batcher.ts";

export interface SqliteVectorIndexOptions {
  /** Most entries stored in all; the oldest (expired ones first) are removed to make room. */
  maxEntries: number;
  /** Most entries of one scope; the scope's oldest are removed to make room. */
  maxEntriesPerScope: number;
  /** How long one slice of loading a scope into memory may run before it yields to other work (ms). */
  loadSliceMs?: number;
}

/** A row's location, as DELETE ... RETURNING gives it, to take the entry out of memory too. */
interface RowKey {
  seq: number;
  scope: string;
  dimension: number;
}

interface Row extends RowKey {
  id: string;
  vector: Uint8Array;
  expires_at: number;
}

/** The in-memory search structure of one scope: one HNSW graph per dimension found in it. */
interface ScopeGraphs {
  byDimension: Map<number, HnswIndex>;
  /** Rows with seq below this are not read yet (rows load newest first); 0 once all are. */
  loadBelow: number;
  /** Rows read but not yet in the graph (the rest of a page when a slice ran out of time). */
  pending: Row[];
}

const { candidates: CANDIDATES, loadPageRows: LOAD_PAGE_ROWS, firstSliceRows: FIRST_SLICE_ROWS } = GRAPH_USE;
const MAX_LOADED_SCOPES = GRAPH_USE.maxLoadedScopes;
/** Expired rows removed on each add, so entries nobody queries again still leave the table. */
const SWEEP_ROWS = 16;

/**
 * The semantic cache's vector index on the local platform. Vectors (float32) persist in a SQLite table of the
 * gateway database, so they survive restarts; each queried scope gets an in-memory HNSW graph (usearch, int8
 * quantised: a quarter of the float32 size) that proposes a few candidates, which are then scored exactly from
 * their stored vectors. A scope's graph is built on its first query, newest entries first, in slices that yield
 * to the event loop: the first slice answers at once and older entries become findable as the rest loads (a
 * miss meanwhile is only a cache miss). usearch itself is loaded on the first query of a scope that has entries.
 */
export class SqliteVectorIndex implements VectorIndex {
  readonly #writes: WriteBatcher;
  readonly #options: Required<SqliteVectorIndexOptions>;
  readonly #statements;
  /** Entries per scope (every scope with entries), read once on first use; bounded by maxEntries. */
  #counts: Map<string, number> | undefined;
  #total = 0;
  /** Loaded scopes, least recently queried first. */
  readonly #graphs = new Map<string, ScopeGraphs>();
  #closed = false;

  constructor(db: SqliteDatabase, writes: WriteBatcher, options: SqliteVectorIndexOptions) {
    this.#writes = writes;
    this.#options = { loadSliceMs: 10, ...options };
    // seq orders entries by age (AUTOINCREMENT never reuses one) and is their key in the in-memory graphs.
    db.exec(`
      CREATE TABLE IF NOT EXISTS cache_vectors (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        scope TEXT NOT NULL,
        id TEXT NOT NULL,
        dimension INTEGER NOT NULL,
        vector BLOB NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE UNIQUE INDEX IF NOT EXISTS cache_vectors_key ON cache_vectors (scope, id);
      CREATE INDEX IF NOT EXISTS cache_vectors_scope_age ON cache_vectors (scope, seq);
      CREATE INDEX IF NOT EXISTS cache_vectors_expiry ON cache_vectors (expires_at);
    `);
    const returning = "RETURNING seq, scope, dimension";
    this.#statements = {
      counts: db.prepare("SELECT scope, COUNT(*) AS entries FROM cache_vectors GROUP BY scope"),
      exists: db.prepare("SELECT 1 FROM cache_vectors WHERE seq = ?"),
      bySeq: db.prepare("SELECT seq, scope, id, dimension, vector, expires_at FROM cache_vectors WHERE seq = ?"),
      page: db.prepare(
        `SELECT seq, scope, id, dimension, vector, expires_at FROM cache_vectors
         WHERE scope = ? AND seq < ? ORDER BY seq DESC LIMIT ${LOAD_PAGE_ROWS}`,
      ),
      insert: db.prepare("INSERT INTO cache_vectors (scope, id, dimension, vector, expires_at) VALUES (?, ?, ?, ?, ?)"),
      removeKey: db.prepare(`DELETE FROM cache_vectors WHERE scope = ? AND id = ? ${returning}`),
      removeSeqs: db.prepare(`DELETE FROM cache_vectors WHERE seq = ? ${returning}`),
      sweepExpired: db.prepare(
        `DELETE FROM cache_vectors WHERE seq IN
           (SELECT seq FROM cache_vectors WHERE expires_at <= ? ORDER BY expires_at LIMIT ${SWEEP_ROWS}) ${returning}`,
      ),
      oldestOfScope: db.prepare(
        `DELETE FROM cache_vectors WHERE seq IN
           (SELECT seq FROM cache_vectors WHERE scope = ? ORDER BY seq LIMIT ?) ${returning}`,
      ),
      oldest: db.prepare(
        `DELETE FROM cache_vectors WHERE seq IN (SELECT seq FROM cache_vectors ORDER BY seq LIMIT ?) ${returning}`,
      ),
    };
  }

  async nearest(
    scope: string,
    vector: Float32Array,
    minScore: number,
  ): Promise<{ id: string; score: number } | undefined> {
    if (checkQuery(scope, vector, minScore) === 0) return undefined;
    // Scopes without entries (most, on a cold cache) cost a map lookup: nothing loads.
    if (!this.#entryCounts().has(scope)) return undefined;
    const graph = this.#graphsOf(scope)?.byDimension.get(vector.length);
    if (!graph || graph.size() === 0) return undefined;
    const now = Date.now();
    const expired: number[] = [];
    let best: { id: string; score: number } | undefined;
    const candidates = graph.search(vector, Math.min(CANDIDATES, graph.size()), 1);
    for (const key of candidates.keys) {
      const row = sqlite("vectors.nearest", () => this.#statements.bySeq.get(Number(key)) as Row | undefined);
      if (!row || row.scope !== scope || row.dimension !== vector.length) {
        // Gone from the table (a rolled-back write): forget it here too.
        graph.remove(key);
        continue;
      }
      if (row.expires_at <= now) {
        expired.push(row.seq);
        continue;
      }
      const score = cosineSimilarity(vector, float32FromBytes(row.vector));
      if (!best || score > best.score) best = { id: row.id, score };
    }
    if (expired.length > 0) {
      await this.#writes.run("vectors.expire", () => {
        for (const seq of expired) this.#forget(this.#statements.removeSeqs.all(seq) as RowKey[]);
      });
    }
    return best && best.score >= minScore ? best : undefined;
  }

  async add(scope: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    checkEntry(scope, id, vector, expiresAt);
    const counts = this.#entryCounts();
    const bytes = new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
    await this.#writes.run("vectors.add", () => {
      const statements = this.#statements;
      this.#forget(statements.removeKey.all(scope, id) as RowKey[]);
      const seq = Number(statements.insert.run(scope, id, vector.length, bytes, Math.floor(expiresAt)).lastInsertRowid);
      counts.set(scope, (counts.get(scope) ?? 0) + 1);
      this.#total++;
      const graphs = this.#graphs.get(scope);
      if (graphs) this.#graphFor(graphs, vector.length).add(BigInt(seq), vector);
      this.#forget(statements.sweepExpired.all(Date.now()) as RowKey[]);
      const overScope = (counts.get(scope) ?? 0) - this.#options.maxEntriesPerScope;
      if (overScope > 0) this.#forget(statements.oldestOfScope.all(scope, overScope) as RowKey[]);
      const overTotal = this.#total - this.#options.maxEntries;
      if (overTotal > 0) this.#forget(statements.oldest.all(overTotal) as RowKey[]);
    });
  }

  async remove(scope: string, id: string): Promise<void> {
    checkScope(scope);
    checkId(id);
    this.#entryCounts();
    await this.#writes.run("vectors.remove", () => {
      this.#forget(this.#statements.removeKey.all(scope, id) as RowKey[]);
    });
  }

  /** Stops loading scopes in the background (call before closing the database). */
  close(): void {
    this.#closed = true;
    this.#graphs.clear();
  }

  /** Entries in memory (loaded graphs), for tests and the benchmark. */
  loadedEntries(scope: string): number {
    return graphEntries(this.#graphs.get(scope)?.byDimension);
  }

  #entryCounts(): Map<string, number> {
    if (this.#counts) return this.#counts;
    const rows = sqlite(
      "vectors.count",
      () => this.#statements.counts.all() as Array<{ scope: string; entries: number }>,
    );
    this.#counts = new Map(rows.map((row) => [row.scope, row.entries]));
    this.#total = rows.reduce((sum, row) => sum + row.entries, 0);
    return this.#counts;
  }

  /** Takes deleted rows out of the counts and the loaded graphs. */
  #forget(rows: RowKey[]): void {
    const counts = this.#entryCounts();
    for (const row of rows) {
      this.#total--;
      const left = (counts.get(row.scope) ?? 1) - 1;
      if (left > 0) counts.set(row.scope, left);
      else {
        counts.delete(row.scope);
        this.#graphs.delete(row.scope);
      }
      this.#graphs.get(row.scope)?.byDimension.get(row.dimension)?.remove(BigInt(row.seq));
    }
  }

  /** The scope's graphs, loading them on first use (the first slice now, the rest in the background). */
  #graphsOf(scope: string): ScopeGraphs | undefined {
    const loaded = this.#graphs.get(scope);
    if (loaded) {
      // Most recently used last.
      this.#graphs.delete(scope);
      this.#graphs.set(scope, loaded);
      return loaded;
    }
    if (this.#closed || !this.#entryCounts().has(scope)) return undefined;
    const graphs: ScopeGraphs = { byDimension: new Map(), loadBelow: Number.MAX_SAFE_INTEGER, pending: [] };
    this.#graphs.set(scope, graphs);
    if (this.#graphs.size > MAX_LOADED_SCOPES) this.#graphs.delete(this.#graphs.keys().next().value!);
    this.#loadSlice(scope, graphs, true);
    return graphs;
  }

  /**
   * Puts rows into the graph for up to loadSliceMs, then schedules the next slice while rows remain. The clock
   * is checked after every row: one graph insert of a 1536-dimension vector takes about a millisecond, so a
   * whole page at once would stall the event loop far longer than a slice.
   */
  #loadSlice(scope: string, graphs: ScopeGraphs, first = false): void {
    // Stopped: closed, or the scope was dropped from memory (emptied, or least recently used).
    if (this.#closed || this.#graphs.get(scope) !== graphs) return;
    const started = performance.now();
    const now = Date.now();
    let inserted = 0;
    for (;;) {
      if (graphs.pending.length === 0) {
        if (graphs.loadBelow === 0) return;
        const page = sqlite("vectors.load", () => this.#statements.page.all(scope, graphs.loadBelow) as Row[]);
        graphs.loadBelow = page.length < LOAD_PAGE_ROWS ? 0 : page.at(-1)!.seq;
        // Newest first: the page is in descending seq order; pop() takes from the end, so reverse it.
        graphs.pending = page.reverse();
        continue;
      }
      const row = graphs.pending.pop()!;
      // Expired rows are not loaded; the sweep on add deletes them. A row deleted since the page was read is
      // skipped too (the graph must hold only rows of the table).
      if (row.expires_at > now && this.#isStored(row)) {
        this.#graphFor(graphs, row.dimension).add(BigInt(row.seq), float32FromBytes(row.vector));
      }
      // The first slice always takes the newest FIRST_SLICE_ROWS, however slow the machine (or usearch's first
      // load, which alone could outlast a slice: the scope's first query then searched a graph of one row).
      if (first && ++inserted < FIRST_SLICE_ROWS) continue;
      if (performance.now() - started >= this.#options.loadSliceMs) {
        setImmediate(() => this.#loadSlice(scope, graphs));
        return;
      }
    }
  }

  #isStored(row: Row): boolean {
    return sqlite("vectors.load", () => this.#statements.exists.get(row.seq) !== undefined);
  }

  #graphFor(graphs: ScopeGraphs, dimensions: number): HnswIndex {
    let graph = graphs.byDimension.get(dimensions);
    if (!graph) {
      graph = newHnswGraph(dimensions);
      graphs.byDimension.set(dimensions, graph);
    }
    return graph;
  }
}

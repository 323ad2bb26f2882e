import type { VectorIndex } from "../../store/vector-index.ts";
import { checkEntry, checkId, checkQuery, checkScope, cosineSimilarity } from "../../store/vector-rules.ts";
import { float32FromBytes, GRAPH_USE, graphEntries, type HnswIndex, newHnswGraph } from "../node/hnsw-graph.ts";
import type { Database } from "./database.ts";

export interface MysqlVectorIndexOptions {
  /** Most entries stored in all, and per scope; the housekeeping pass removes the oldest past them. */
  maxEntries: number;
  maxEntriesPerScope: number;
  /** How long one slice of loading a scope into memory may run before it yields to other work (ms). */
  loadSliceMs?: number;
}

interface Row {
  seq: number;
  id: Buffer;
  dimension: number;
  vector: Buffer;
  expires_at: number;
}

/** A scope held in memory: one HNSW graph per dimension, and how far the table has been read. */
interface LoadedScope {
  byDimension: Map<number, HnswIndex>;
  /** Entry id -> its seq in the graph, so a remove or replace here takes the old one out at once. */
  seqOf: Map<string, number>;
  idOf: Map<number, string>;
  /** Rows above this seq are read by the next query (rows other replicas added). */
  newestRead: number;
  /** Older rows still to load, newest first: rows with seq below this (0 once all are). */
  loadBelow: number;
  pending: Row[];
}

const { candidates: CANDIDATES, loadPageRows: LOAD_PAGE_ROWS, firstSliceRows: FIRST_SLICE_ROWS } = GRAPH_USE;
const MAX_LOADED_SCOPES = GRAPH_USE.maxLoadedScopes;
/** Most newer rows a query reads before it searches (the rest the next query reads). */
const CATCH_UP_ROWS = 512;
const COLUMNS = "seq, id, dimension, vector, expires_at";

/**
 * The semantic cache's vector index on the MySQL platform: MySQL is the source of truth (table cache_vectors,
 * float32 bytes), and each process keeps an in-memory HNSW graph (usearch, int8) per queried scope that proposes
 * candidates. Several processes stay exact without talking to each other: every query first reads the scope's
 * rows added since the process last looked (one indexed range read, usually empty), and every candidate is
 * checked against its row before it is answered (one primary-key read), so an entry another process removed or
 * replaced is never answered and is dropped from the graph when met. docs/self-hosting.md gives the measured
 * cost against scoring every vector of the scope in the database's client (brute force).
 */
export class MysqlVectorIndex implements VectorIndex {
  readonly #db: Database;
  readonly #options: Required<MysqlVectorIndexOptions>;
  /** Loaded scopes, least recently queried first. */
  readonly #scopes = new Map<string, LoadedScope>();
  #closed = false;

  constructor(db: Database, options: MysqlVectorIndexOptions) {
    this.#db = db;
    this.#options = { loadSliceMs: 10, ...options };
  }

  async nearest(
    scope: string,
    vector: Float32Array,
    minScore: number,
  ): Promise<{ id: string; score: number } | undefined> {
    if (checkQuery(scope, vector, minScore) === 0) return undefined;
    const loaded = await this.#scopeOf(scope);
    const graph = loaded?.byDimension.get(vector.length);
    if (!loaded || !graph || graph.size() === 0) return undefined;
    const keys = [...graph.search(vector, Math.min(CANDIDATES, graph.size()), 1).keys].map(Number);
    if (keys.length === 0) return undefined;
    const rows = await this.#db.run<Row[]>(
      "vectors.nearest",
      `SELECT ${COLUMNS} FROM cache_vectors WHERE seq IN (${keys.map(() => "?").join(", ")})`,
      keys,
    );
    const found = new Map(rows.map((row) => [Number(row.seq), row]));
    const now = Date.now();
    let best: { id: string; score: number } | undefined;
    for (const key of keys) {
      const row = found.get(key);
      // Removed, replaced or expired (by any process): out of this graph too.
      if (!row || row.expires_at <= now) {
        this.#forget(loaded, key, vector.length);
        continue;
      }
      const score = cosineSimilarity(vector, float32FromBytes(row.vector));
      if (!best || score > best.score) best = { id: row.id.toString("utf8"), score };
    }
    return best && best.score >= minScore ? best : undefined;
  }

  async add(scope: string, id: string, vector: Float32Array, expiresAt: number): Promise<void> {
    checkEntry(scope, id, vector, expiresAt);
    const bytes = Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
    // REPLACE: the entry of the same scope and id goes, the new one gets a new seq (other graphs see it as new).
    const result = await this.#db.run<{ insertId: number }>(
      "vectors.add",
      "REPLACE INTO cache_vectors (scope, id, dimension, vector, expires_at) VALUES (?, ?, ?, ?, ?)",
      [scope, id, vector.length, bytes, Math.floor(expiresAt)],
    );
    const loaded = this.#scopes.get(scope);
    if (loaded) {
      const previous = loaded.seqOf.get(id);
      if (previous !== undefined) this.#forget(loaded, previous);
      if (expiresAt > Date.now()) this.#insert(loaded, id, Number(result.insertId), vector);
    }
  }

  async remove(scope: string, id: string): Promise<void> {
    checkScope(scope);
    checkId(id);
    await this.#db.run("vectors.remove", "DELETE FROM cache_vectors WHERE scope = ? AND id = ?", [scope, id]);
    const loaded = this.#scopes.get(scope);
    const seq = loaded?.seqOf.get(id);
    if (loaded && seq !== undefined) this.#forget(loaded, seq);
  }

  /**
   * The housekeeping pass (housekeeping.ts, one process at a time): deletes expired entries, then the oldest of
   * each scope past maxEntriesPerScope and the oldest of all past maxEntries. Returns the rows deleted.
   */
  async sweep(now = Date.now()): Promise<number> {
    let deleted = 0;
    for (;;) {
      const result = await this.#db.run<{ affectedRows: number }>(
        "vectors.sweep",
        "DELETE FROM cache_vectors WHERE expires_at <= ? LIMIT 1000",
        [now],
      );
      deleted += result.affectedRows;
      if (result.affectedRows < 1000) break;
    }
    const crowded = await this.#db.run<Array<{ scope: Buffer; entries: number }>>(
      "vectors.sweep",
      "SELECT scope, COUNT(*) AS entries FROM cache_vectors GROUP BY scope HAVING entries > ?",
      [this.#options.maxEntriesPerScope],
    );
    for (const { scope, entries } of crowded) {
      const result = await this.#db.run<{ affectedRows: number }>(
        "vectors.sweep",
        "DELETE FROM cache_vectors WHERE scope = ? ORDER BY seq LIMIT ?",
        [scope, Number(entries) - this.#options.maxEntriesPerScope],
      );
      deleted += result.affectedRows;
    }
    const [{ total }] = await this.#db.run<Array<{ total: number }>>(
      "vectors.sweep",
      "SELECT COUNT(*) AS total FROM cache_vectors",
    );
    if (Number(total) > this.#options.maxEntries) {
      const result = await this.#db.run<{ affectedRows: number }>(
        "vectors.sweep",
        "DELETE FROM cache_vectors ORDER BY seq LIMIT ?",
        [Number(total) - this.#options.maxEntries],
      );
      deleted += result.affectedRows;
    }
    return deleted;
  }

  /** Stops loading scopes in the background. */
  close(): void {
    this.#closed = true;
    this.#scopes.clear();
  }

  /** Entries of a scope in this process's graphs (tests and the benchmark). */
  loadedEntries(scope: string): number {
    return graphEntries(this.#scopes.get(scope)?.byDimension);
  }

  /** The scope in memory, with every row added since the last query read; undefined when the scope is empty. */
  async #scopeOf(scope: string): Promise<LoadedScope | undefined> {
    let loaded = this.#scopes.get(scope);
    if (loaded) {
      // Most recently used last.
      this.#scopes.delete(scope);
      this.#scopes.set(scope, loaded);
      const newer = await this.#db.run<Row[]>(
        "vectors.nearest",
        `SELECT ${COLUMNS} FROM cache_vectors WHERE scope = ? AND seq > ? ORDER BY seq LIMIT ${CATCH_UP_ROWS}`,
        [scope, loaded.newestRead],
      );
      const now = Date.now();
      for (const row of newer) {
        const seq = Number(row.seq);
        loaded.newestRead = Math.max(loaded.newestRead, seq);
        const id = row.id.toString("utf8");
        if (row.expires_at <= now || loaded.seqOf.get(id) === seq) continue;
        const previous = loaded.seqOf.get(id);
        if (previous !== undefined) this.#forget(loaded, previous);
        this.#insert(loaded, id, seq, float32FromBytes(row.vector), row.dimension);
      }
      return loaded;
    }
    // First query of the scope here: the newest page now, older ones in slices in the background.
    const page = await this.#db.run<Row[]>(
      "vectors.load",
      `SELECT ${COLUMNS} FROM cache_vectors WHERE scope = ? ORDER BY seq DESC LIMIT ${LOAD_PAGE_ROWS}`,
      [scope],
    );
    if (page.length === 0 || this.#closed) return undefined;
    loaded = this.#scopes.get(scope);
    if (loaded) return loaded; // another query loaded it meanwhile
    loaded = {
      byDimension: new Map(),
      seqOf: new Map(),
      idOf: new Map(),
      newestRead: Number(page[0]!.seq),
      loadBelow: page.length < LOAD_PAGE_ROWS ? 0 : Number(page.at(-1)!.seq),
      pending: page.reverse(),
    };
    this.#scopes.set(scope, loaded);
    if (this.#scopes.size > MAX_LOADED_SCOPES) this.#scopes.delete(this.#scopes.keys().next().value!);
    await this.#loadSlice(scope, loaded, true);
    return loaded;
  }

  /**
   * Puts rows into the graphs for up to loadSliceMs, then schedules the next slice while rows remain: one graph
   * insert of a 1536-dimension vector takes about a millisecond, so a whole page at once would stall the loop.
   */
  async #loadSlice(scope: string, loaded: LoadedScope, first = false): Promise<void> {
    const started = performance.now();
    const now = Date.now();
    let inserted = 0;
    for (;;) {
      if (this.#closed || this.#scopes.get(scope) !== loaded) return;
      if (loaded.pending.length === 0) {
        if (loaded.loadBelow === 0) return;
        const page = await this.#db.run<Row[]>(
          "vectors.load",
          `SELECT ${COLUMNS} FROM cache_vectors WHERE scope = ? AND seq < ? ORDER BY seq DESC LIMIT ${LOAD_PAGE_ROWS}`,
          [scope, loaded.loadBelow],
        );
        loaded.loadBelow = page.length < LOAD_PAGE_ROWS ? 0 : Number(page.at(-1)!.seq);
        loaded.pending = page.reverse();
        continue;
      }
      // pop() takes from the end: the newest pending row.
      const row = loaded.pending.pop()!;
      const id = row.id.toString("utf8");
      // A newer row of the same id (replaced since) is already in: keep it.
      if (row.expires_at > now && !loaded.seqOf.has(id)) {
        this.#insert(loaded, id, Number(row.seq), float32FromBytes(row.vector), row.dimension);
      }
      // The first slice always takes the newest FIRST_SLICE_ROWS, however slow the machine (or usearch's load).
      if (first && ++inserted < FIRST_SLICE_ROWS) continue;
      if (performance.now() - started >= this.#options.loadSliceMs) {
        setImmediate(() => {
          this.#loadSlice(scope, loaded).catch((error) => console.error("vector index: loading a scope failed", error));
        });
        return;
      }
    }
  }

  #insert(loaded: LoadedScope, id: string, seq: number, vector: Float32Array, dimension = vector.length): void {
    let graph = loaded.byDimension.get(dimension);
    if (!graph) {
      graph = newHnswGraph(dimension);
      loaded.byDimension.set(dimension, graph);
    }
    graph.add(BigInt(seq), vector);
    loaded.seqOf.set(id, seq);
    loaded.idOf.set(seq, id);
  }

  /** Takes a seq out of the scope's graphs (of `dimension`, or all when not known) and its id map. */
  #forget(loaded: LoadedScope, seq: number, dimension?: number): void {
    const graphs = dimension === undefined ? loaded.byDimension.values() : [loaded.byDimension.get(dimension)];
    for (const graph of graphs) graph?.remove(BigInt(seq));
    const id = loaded.idOf.get(seq);
    loaded.idOf.delete(seq);
    if (id !== undefined && loaded.seqOf.get(id) === seq) loaded.seqOf.delete(id);
  }
}

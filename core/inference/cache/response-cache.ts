import type { Blobs, Records } from "../../store/ports.ts";
import { CacheStore } from "./cache-store.ts";
import type { SemanticCacheIndex } from "./semantic-index.ts";

/** The cache as the pipeline sees it: the entry store, the semantic index when one is set up, the defaults. */
export class ResponseCache {
  readonly store: CacheStore;
  /** Vectors of semantic entries (core/store); without one, semantic configs cache exact matches only. */
  semanticIndex?: SemanticCacheIndex;
  /** `max_age` when a config gives none (GATEWAY_CACHE_MAX_AGE). */
  readonly defaultMaxAgeSeconds: number;

  constructor(
    records: Records,
    blobs: Blobs,
    options: { maxEntryBytes: number; defaultMaxAgeSeconds: number; semanticIndex?: SemanticCacheIndex },
  ) {
    this.store = new CacheStore(records, blobs, { maxEntryBytes: options.maxEntryBytes });
    this.defaultMaxAgeSeconds = options.defaultMaxAgeSeconds;
    this.semanticIndex = options.semanticIndex;
  }
}

import type { Client } from "@modelcontextprotocol/client";
import { closeUpstream } from "./client.ts";

/**
 * Connected upstream clients kept briefly for reuse by server-side tool calls (a model's tool loop calls the
 * same server several times in a few seconds; each new client costs the upstream an `initialize` round trip).
 * Keyed by server and integration versions and by who calls (their credentials differ), so an edit or another
 * user never reuses a client. Entries live `ttlMs` (shorter than the 30 s margin client-credentials tokens are
 * refreshed with, so a kept client's token is still valid), at most `maxEntries`; a failed call drops its
 * client. Not used by the MCP endpoint: there a client per request keeps each call's notifications its own.
 */
export class UpstreamPool {
  readonly #entries = new Map<string, { client: Promise<Client>; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #maxEntries: number;

  constructor(options: { ttlMs: number; maxEntries: number }) {
    this.#ttlMs = options.ttlMs;
    this.#maxEntries = options.maxEntries;
  }

  /** Runs `use` with a kept client for `key`, or a new one from `connect` (kept when it connects). */
  async use<T>(key: string, connect: () => Promise<Client>, use: (client: Client) => Promise<T>): Promise<T> {
    const now = Date.now();
    let entry = this.#entries.get(key);
    if (entry && entry.expiresAt <= now) {
      this.#drop(key, entry.client);
      entry = undefined;
    }
    if (!entry) {
      this.#evictExpired(now);
      if (this.#entries.size >= this.#maxEntries) {
        const [oldestKey, oldest] = this.#entries.entries().next().value!;
        this.#drop(oldestKey, oldest.client);
      }
      entry = { client: connect(), expiresAt: now + this.#ttlMs };
      this.#entries.set(key, entry);
    }
    const pending = entry.client;
    let client: Client;
    try {
      client = await pending;
    } catch (error) {
      this.#drop(key, pending);
      throw error;
    }
    try {
      return await use(client);
    } catch (error) {
      // The connection may be what failed: the next call starts afresh.
      this.#drop(key, pending);
      throw error;
    }
  }

  get size(): number {
    return this.#entries.size;
  }

  #evictExpired(now: number): void {
    for (const [key, entry] of this.#entries) if (entry.expiresAt <= now) this.#drop(key, entry.client);
  }

  #drop(key: string, client: Promise<Client>): void {
    if (this.#entries.get(key)?.client === client) this.#entries.delete(key);
    // Closed a little later: a call that took this client just before it expired may still be using it.
    const timer = setTimeout(() => void client.then(closeUpstream).catch(() => {}), this.#ttlMs);
    (timer as { unref?: () => void }).unref?.();
  }
}

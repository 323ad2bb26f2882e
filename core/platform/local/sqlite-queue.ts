import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  deadLetterQueueName,
  checkReceiveMax,
  MAX_RECEIVES,
  type Queue,
  type QueueMessage,
} from "../../store/ports.ts";
import type { SqliteDatabase } from "./sqlite.ts";
import type { WriteBatcher } from "./write-batcher.ts";

/** How often a long-polling receive looks again; local traffic is light, so a short poll is cheap. */
const POLL_MS = 100;
const DLQ_SUFFIX = deadLetterQueueName("");

interface MessageRow {
  id: string;
  body: string;
  attempts: number;
}

/**
 * Queues in one SQLite table, SQS-style: a received message is hidden until `visible_at` (epoch ms) and comes
 * back unless acked; the receive that would exceed MAX_RECEIVES moves it to the dead-letter queue instead.
 * The receipt changes on every receive, so a late ack from an earlier consumer cannot delete a redelivery.
 */
export class SqliteQueue implements Queue {
  readonly #insert;
  readonly #receive: (queue: string, max: number, visibilityTimeoutSeconds: number) => QueueMessage[];
  readonly #sendBatch: (queue: string, bodies: string[]) => string[];
  readonly #ack;
  readonly #release;
  /**
   * Every queue write goes through the database's write batcher, like records and counters: it joins the open
   * batch and resolves once that batch is committed (a send reported done is on disk; a rolled-back batch
   * rejects it).
   */
  readonly #writes: WriteBatcher;

  constructor(db: SqliteDatabase, writes: WriteBatcher) {
    this.#writes = writes;
    db.exec(`
      CREATE TABLE IF NOT EXISTS queue_messages (
        id TEXT NOT NULL UNIQUE,
        queue TEXT NOT NULL,
        body TEXT NOT NULL,
        visible_at INTEGER NOT NULL,
        receipt TEXT UNIQUE,
        attempts INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX IF NOT EXISTS queue_messages_visible ON queue_messages (queue, visible_at);
    `);
    this.#insert = db.prepare("INSERT INTO queue_messages (id, queue, body, visible_at) VALUES (?, ?, ?, ?)");
    const select = db.prepare(
      "SELECT id, body, attempts FROM queue_messages WHERE queue = ? AND visible_at <= ? ORDER BY visible_at, rowid LIMIT ?",
    );
    const hide = db.prepare("UPDATE queue_messages SET attempts = ?, receipt = ?, visible_at = ? WHERE id = ?");
    const deadLetter = db.prepare(
      "UPDATE queue_messages SET queue = ?, attempts = 0, receipt = NULL, visible_at = ? WHERE id = ?",
    );
    this.#ack = db.prepare("DELETE FROM queue_messages WHERE queue = ? AND receipt = ?");
    this.#release = db.prepare(
      "UPDATE queue_messages SET receipt = NULL, visible_at = ? WHERE queue = ? AND receipt = ?",
    );

    const receive = db.transaction((queue: string, max: number, visibilityTimeoutSeconds: number) => {
      const now = Date.now();
      const messages: QueueMessage[] = [];
      // Like SQS, a dead-lettered message still used up one of the `max` slots of this receive.
      for (const row of select.all(queue, now, max) as MessageRow[]) {
        const attempts = row.attempts + 1;
        if (attempts > MAX_RECEIVES && !queue.endsWith(DLQ_SUFFIX)) {
          deadLetter.run(deadLetterQueueName(queue), now, row.id);
          continue;
        }
        const receipt = randomUUID();
        hide.run(attempts, receipt, now + visibilityTimeoutSeconds * 1000, row.id);
        messages.push({ id: row.id, receipt, body: JSON.parse(row.body), attempts });
      }
      return messages;
    });
    const sendBatch = db.transaction((queue: string, bodies: string[]) => {
      const now = Date.now();
      return bodies.map((body) => {
        const id = randomUUID();
        this.#insert.run(id, queue, body, now);
        return id;
      });
    });
    this.#receive = (queue, max, visibilityTimeoutSeconds) => receive.immediate(queue, max, visibilityTimeoutSeconds);
    this.#sendBatch = (queue, bodies) => sendBatch.immediate(queue, bodies);
  }

  async send(queue: string, body: unknown, options: { delaySeconds?: number } = {}): Promise<string> {
    const id = randomUUID();
    const json = serialize(body);
    const visibleAt = Date.now() + (options.delaySeconds ?? 0) * 1000;
    await this.#writes.run("queue.send", () => this.#insert.run(id, queue, json, visibleAt));
    return id;
  }

  async sendBatch(queue: string, bodies: unknown[]): Promise<string[]> {
    const json = bodies.map(serialize);
    return this.#writes.run("queue.sendBatch", () => this.#sendBatch(queue, json));
  }

  async receive(
    queue: string,
    options: { max: number; visibilityTimeoutSeconds: number; waitSeconds?: number },
  ): Promise<QueueMessage[]> {
    checkReceiveMax(options.max);
    const deadline = Date.now() + (options.waitSeconds ?? 0) * 1000;
    for (;;) {
      const messages = await this.#writes.run("queue.receive", () =>
        this.#receive(queue, options.max, options.visibilityTimeoutSeconds),
      );
      const left = deadline - Date.now();
      if (messages.length > 0 || left <= 0) return messages;
      await sleep(Math.min(POLL_MS, left));
    }
  }

  async ack(queue: string, receipt: string): Promise<void> {
    await this.#writes.run("queue.ack", () => this.#ack.run(queue, receipt));
  }

  async release(queue: string, receipt: string, delaySeconds = 0): Promise<void> {
    await this.#writes.run("queue.release", () => this.#release.run(Date.now() + delaySeconds * 1000, queue, receipt));
  }
}

function serialize(body: unknown): string {
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError("a queue message body must be JSON-serialisable");
  return json;
}

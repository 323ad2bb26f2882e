import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import {
  deadLetterQueueName,
  MAX_RECEIVE_BATCH,
  MAX_RECEIVES,
  type Queue,
  type QueueMessage,
} from "../../store/ports.ts";
import type { Database } from "./database.ts";

/** How often a long-polling receive looks again. */
const POLL_MS = 100;
/** Claims tried again at once when visible messages were all skipped as locked. */
const SKIPPED_RETRIES = 3;
const DLQ_SUFFIX = deadLetterQueueName("");
/** Messages inserted per statement by sendBatch. */
const INSERT_ROWS = 100;

interface MessageRow {
  seq: number;
  id: string;
  body: string;
  attempts: number;
}

/**
 * Queues in one MySQL table, SQS-style: a received message is hidden until `visible_at` (epoch ms) and comes
 * back unless acked; the receive that would pass MAX_RECEIVES moves it to the dead-letter queue instead.
 * Receivers in any number of processes claim messages with SELECT ... FOR UPDATE SKIP LOCKED: each skips the
 * rows another is claiming rather than waiting for them, so no message is handed to two receivers at once.
 * The receipt changes on every receive, so a late ack from an earlier consumer cannot delete a redelivery.
 */
export class MysqlQueue implements Queue {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async send(queue: string, body: unknown, options: { delaySeconds?: number } = {}): Promise<string> {
    const id = randomUUID();
    const visibleAt = Date.now() + (options.delaySeconds ?? 0) * 1000;
    await this.#db.run("queue.send", "INSERT INTO queue_messages (id, queue, body, visible_at) VALUES (?, ?, ?, ?)", [
      id,
      queue,
      serialize(body),
      visibleAt,
    ]);
    return id;
  }

  async sendBatch(queue: string, bodies: unknown[]): Promise<string[]> {
    const rows = bodies.map((body) => [randomUUID(), queue, serialize(body), Date.now()] as const);
    for (let start = 0; start < rows.length; start += INSERT_ROWS) {
      const slice = rows.slice(start, start + INSERT_ROWS);
      await this.#db.run(
        "queue.sendBatch",
        `INSERT INTO queue_messages (id, queue, body, visible_at) VALUES ${slice.map(() => "(?, ?, ?, ?)").join(", ")}`,
        slice.flat(),
      );
    }
    return rows.map(([id]) => id);
  }

  async receive(
    queue: string,
    options: { max: number; visibilityTimeoutSeconds: number; waitSeconds?: number },
  ): Promise<QueueMessage[]> {
    if (!Number.isInteger(options.max) || options.max < 1 || options.max > MAX_RECEIVE_BATCH) {
      throw new RangeError(`max must be 1..${MAX_RECEIVE_BATCH}`);
    }
    const deadline = Date.now() + (options.waitSeconds ?? 0) * 1000;
    for (let skipped = 0; ; ) {
      const { messages, visible } = await this.#claim(queue, options.max, options.visibilityTimeoutSeconds);
      if (messages.length > 0) return messages;
      // Visible messages, all skipped: held by other receivers, or locked for an instant by another queue's
      // receive that read one row past its own range. Look again at once a few times before waiting.
      if (visible && ++skipped <= SKIPPED_RETRIES) continue;
      const left = deadline - Date.now();
      if (left <= 0) return messages;
      await sleep(Math.min(POLL_MS, left));
    }
  }

  async ack(queue: string, receipt: string): Promise<void> {
    await this.#db.run("queue.ack", "DELETE FROM queue_messages WHERE queue = ? AND receipt = ?", [queue, receipt]);
  }

  async release(queue: string, receipt: string, delaySeconds = 0): Promise<void> {
    await this.#db.run(
      "queue.release",
      "UPDATE queue_messages SET receipt = NULL, visible_at = ? WHERE queue = ? AND receipt = ?",
      [Date.now() + delaySeconds * 1000, queue, receipt],
    );
  }

  /** One claim: up to `max` visible messages locked (skipping those others hold), hidden and returned. */
  async #claim(
    queue: string,
    max: number,
    visibilityTimeoutSeconds: number,
  ): Promise<{ messages: QueueMessage[]; visible: boolean }> {
    // Idle pollers (every replica's workers) look first without a transaction: one round trip, no locks.
    const waiting = await this.#db.run<unknown[]>(
      "queue.receive",
      "SELECT 1 FROM queue_messages WHERE queue = ? AND visible_at <= ? LIMIT 1",
      [queue, Date.now()],
    );
    if (waiting.length === 0) return { messages: [], visible: false };
    const messages = await this.#db.transaction("queue.receive", async (run) => {
      const now = Date.now();
      const rows = await run<MessageRow[]>(
        `SELECT seq, id, body, attempts FROM queue_messages WHERE queue = ? AND visible_at <= ?
         ORDER BY visible_at, seq LIMIT ? FOR UPDATE SKIP LOCKED`,
        [queue, now, max],
      );
      const messages: QueueMessage[] = [];
      // Like SQS, a dead-lettered message still used up one of the `max` slots of this receive.
      for (const row of rows) {
        const attempts = row.attempts + 1;
        if (attempts > MAX_RECEIVES && !queue.endsWith(DLQ_SUFFIX)) {
          await run("UPDATE queue_messages SET queue = ?, attempts = 0, receipt = NULL, visible_at = ? WHERE seq = ?", [
            deadLetterQueueName(queue),
            now,
            row.seq,
          ]);
          continue;
        }
        const receipt = randomUUID();
        await run("UPDATE queue_messages SET attempts = ?, receipt = ?, visible_at = ? WHERE seq = ?", [
          attempts,
          receipt,
          now + visibilityTimeoutSeconds * 1000,
          row.seq,
        ]);
        messages.push({ id: row.id, receipt, body: JSON.parse(row.body), attempts });
      }
      return messages;
    });
    return { messages, visible: true };
  }
}

function serialize(body: unknown): string {
  const json = JSON.stringify(body);
  if (json === undefined) throw new TypeError("a queue message body must be JSON-serialisable");
  return json;
}

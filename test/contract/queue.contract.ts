import { setTimeout as sleep } from "node:timers/promises";
import { describe, it } from "vitest";
import { deadLetterQueueName, MAX_RECEIVES, type Queue, type QueueMessage } from "../../core/store/ports.ts";

/** A queue (and its dead-letter queue) that no other test uses. */
export type QueueFactory = () => Promise<{ queue: Queue; name: string }>;

async function receiveAll(queue: Queue, name: string, count: number): Promise<QueueMessage[]> {
  const messages: QueueMessage[] = [];
  for (let round = 0; round < 20 && messages.length < count; round++) {
    messages.push(...(await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30, waitSeconds: 1 })));
  }
  return messages;
}

export function queueContract(freshQueue: QueueFactory) {
  // Every test has its own queue, so they run concurrently: most of their time is waiting for timeouts.
  describe.concurrent("Queue", () => {
    it("sends, receives and acks", async ({ expect }) => {
      const { queue, name } = await freshQueue();
      const id = await queue.send(name, { job: "one", n: [1, 2] });
      const [message, ...rest] = await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30 });
      expect(rest).toEqual([]);
      expect(message).toMatchObject({ id, body: { job: "one", n: [1, 2] }, attempts: 1 });
      expect(typeof message.receipt).toBe("string");
      // Hidden while in flight.
      expect(await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30 })).toEqual([]);
      await queue.ack(name, message.receipt);
    });

    it("sends batches larger than one SQS batch", async ({ expect }) => {
      const { queue, name } = await freshQueue();
      const bodies = Array.from({ length: 13 }, (_, i) => ({ i }));
      const ids = await queue.sendBatch(name, bodies);
      expect(ids).toHaveLength(13);
      expect(new Set(ids).size).toBe(13);
      const messages = await receiveAll(queue, name, 13);
      expect(messages.map((message) => (message.body as { i: number }).i).sort((a, b) => a - b)).toEqual(
        bodies.map((body) => body.i),
      );
      expect(new Set(messages.map((message) => message.id))).toEqual(new Set(ids));
    });

    it("redelivers what was not acked once the visibility timeout ends, counting attempts", async ({ expect }) => {
      const { queue, name } = await freshQueue();
      await queue.sendBatch(name, ["acked", "dropped"]);
      const first = await receiveAll(queue, name, 2);
      expect(first.map((message) => message.attempts)).toEqual([1, 1]);
      // Receive again with a short timeout; only the one not acked must come back.
      for (const message of first) await queue.release(name, message.receipt);
      const second = await receiveAll(queue, name, 2);
      expect(second.map((message) => message.attempts)).toEqual([2, 2]);
      const acked = second.find((message) => message.body === "acked")!;
      await queue.ack(name, acked.receipt);
      const dropped = second.find((message) => message.body === "dropped")!;
      await queue.release(name, dropped.receipt);
      const [third] = await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 1 });
      expect(third).toMatchObject({ body: "dropped", attempts: 3 });

      expect(await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 1 })).toEqual([]);
      await sleep(1_100);
      const again = await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 1, waitSeconds: 1 });
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ id: third.id, body: "dropped", attempts: 4 });
      expect(again[0].receipt).not.toBe(third.receipt);
    });

    it(`dead-letters a message received more than ${MAX_RECEIVES} times`, async ({ expect }) => {
      const { queue, name } = await freshQueue();
      const id = await queue.send(name, { poison: true });
      for (let attempt = 1; attempt <= MAX_RECEIVES; attempt++) {
        const [message] = await queue.receive(name, { max: 1, visibilityTimeoutSeconds: 30 });
        expect(message).toMatchObject({ id, attempts: attempt });
        await queue.release(name, message.receipt);
      }
      expect(await queue.receive(name, { max: 1, visibilityTimeoutSeconds: 30 })).toEqual([]);
      const [dead] = await queue.receive(deadLetterQueueName(name), {
        max: 10,
        visibilityTimeoutSeconds: 30,
        waitSeconds: 1,
      });
      expect(dead).toMatchObject({ id, body: { poison: true } });
      await queue.ack(deadLetterQueueName(name), dead.receipt);
    });

    it("delays messages and releases with a delay", async ({ expect }) => {
      const { queue, name } = await freshQueue();
      await queue.send(name, "later", { delaySeconds: 1 });
      expect(await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30 })).toEqual([]);
      const [delayed] = await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30, waitSeconds: 3 });
      expect(delayed).toMatchObject({ body: "later", attempts: 1 });

      await queue.release(name, delayed.receipt, 1);
      expect(await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30 })).toEqual([]);
      const [released] = await queue.receive(name, { max: 10, visibilityTimeoutSeconds: 30, waitSeconds: 3 });
      expect(released).toMatchObject({ id: delayed.id, body: "later", attempts: 2 });
    });

    it("long-polls until a message arrives", async ({ expect }) => {
      const { queue, name } = await freshQueue();
      const started = Date.now();
      setTimeout(() => void queue.send(name, "ping"), 300);
      const [message] = await queue.receive(name, { max: 1, visibilityTimeoutSeconds: 30, waitSeconds: 5 });
      expect(message?.body).toBe("ping");
      expect(Date.now() - started).toBeLessThan(3_000);
    });
  });
}

import type { Services } from "../../services.ts";
import type { QueueConsumer } from "../../workers/consumer.ts";

const VISIBILITY_TIMEOUT_SECONDS = 300;
const BATCH_SIZE = 10;

/**
 * The local stand-in for SQS-triggered worker Lambdas: polls each queue that has a consumer, hands batches to
 * it, acks what succeeded and releases what failed (the queue dead-letters after repeated failures).
 */
export class WorkerLoop {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private current: Promise<void> | undefined;
  private readonly services: Services;
  private readonly consumers: Partial<Record<string, QueueConsumer>>;
  private readonly pollMs: number;

  constructor(services: Services, consumers: Partial<Record<string, QueueConsumer>>, pollMs: number) {
    this.services = services;
    this.consumers = consumers;
    this.pollMs = pollMs;
  }

  start(): void {
    if (this.running || Object.keys(this.consumers).length === 0) return;
    this.running = true;
    this.schedule(0);
  }

  /** Stops polling and waits for the batch in hand to finish. */
  async stop(): Promise<void> {
    this.running = false;
    clearTimeout(this.timer);
    await this.current;
  }

  /** Runs one poll of every queue now (tests use it to avoid waiting for the timer). */
  async drain(): Promise<number> {
    let handled = 0;
    for (const [queue, consumer] of Object.entries(this.consumers)) {
      if (consumer) handled += await this.pollQueue(queue, consumer);
    }
    return handled;
  }

  private schedule(delay: number): void {
    this.timer = setTimeout(() => {
      this.current = this.drain()
        .catch((error) => console.error("worker loop: poll failed", error))
        .then((handled) => {
          if (this.running) this.schedule(handled ? 0 : this.pollMs);
        });
    }, delay);
    this.timer.unref();
  }

  private async pollQueue(queue: string, consumer: QueueConsumer): Promise<number> {
    const { queue: port } = this.services.stores;
    const messages = await port.receive(queue, {
      max: BATCH_SIZE,
      visibilityTimeoutSeconds: VISIBILITY_TIMEOUT_SECONDS,
    });
    if (messages.length === 0) return 0;
    let failedIds: string[];
    try {
      ({ failedIds } = await consumer(messages, this.services));
    } catch (error) {
      console.error(`worker loop: consumer of '${queue}' failed`, error);
      failedIds = messages.map((message) => message.id);
    }
    const failed = new Set(failedIds);
    for (const message of messages) {
      if (failed.has(message.id)) await port.release(queue, message.receipt, Math.min(2 ** message.attempts, 60));
      else await port.ack(queue, message.receipt);
    }
    return messages.length;
  }
}

import type { Services, QueueConsumer, ScheduledTask } from "../../services.ts";

const BATCH_SIZE = 10;

export interface WorkerLoopOptions {
  /** Wait between polls of an empty queue (ms). */
  pollMs: number;
  /** How long a received message stays hidden before it is delivered again (SQS's visibility timeout). */
  visibilityTimeoutSeconds: number;
  /** Receives in flight per queue (each up to BATCH_SIZE messages, which a consumer may run together). */
  concurrency?: Partial<Record<string, number>>;
  /** Periodic tasks (core/routes/scheduled-tasks.ts), each run every `everySeconds`, never twice at once. */
  tasks?: readonly ScheduledTask[];
}

/**
 * The local stand-in for SQS-triggered worker Lambdas and the scheduled worker: polls each queue that has a
 * consumer, hands batches to it, acks what succeeded and releases what failed (the queue dead-letters after
 * repeated failures); runs the scheduled tasks on their intervals.
 */
export class WorkerLoop {
  private running = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly stopping = new AbortController();
  private readonly services: Services;
  private readonly consumers: Partial<Record<string, QueueConsumer>>;
  private readonly options: WorkerLoopOptions;

  constructor(services: Services, consumers: Partial<Record<string, QueueConsumer>>, options: WorkerLoopOptions) {
    this.services = services;
    this.consumers = consumers;
    this.options = options;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    for (const [queue, consumer] of Object.entries(this.consumers)) {
      if (!consumer) continue;
      const pollers = Math.max(1, this.options.concurrency?.[queue] ?? 1);
      for (let index = 0; index < pollers; index++) this.pollForever(queue, consumer);
    }
    for (const task of this.options.tasks ?? []) this.repeat(task);
  }

  /** Stops polling and waits for the work in hand to finish. */
  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Runs one poll of every queue now (tests use it to avoid waiting for the timer). */
  async drain(): Promise<number> {
    let handled = 0;
    for (const [queue, consumer] of Object.entries(this.consumers)) {
      if (consumer) handled += await this.track(this.pollQueue(queue, consumer));
    }
    return handled;
  }

  /** Runs every scheduled task once now (tests). */
  async runTasks(): Promise<void> {
    for (const task of this.options.tasks ?? []) await this.track(this.runTask(task));
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    work.finally(() => this.inFlight.delete(work)).catch(() => {});
    return work;
  }

  private later(delay: number, run: () => void): void {
    if (!this.running) return;
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (this.running) run();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  private pollForever(queue: string, consumer: QueueConsumer, delay = 0): void {
    this.later(delay, () => {
      this.track(this.pollQueue(queue, consumer))
        .catch((error) => {
          console.error(`worker loop: poll of '${queue}' failed`, error);
          return 0;
        })
        .then((handled) => this.pollForever(queue, consumer, handled ? 0 : this.options.pollMs));
    });
  }

  private repeat(task: ScheduledTask, delay = 0): void {
    this.later(delay, () => {
      this.track(this.runTask(task)).then(() => this.repeat(task, task.everySeconds * 1000));
    });
  }

  private async runTask(task: ScheduledTask): Promise<void> {
    try {
      await task.run(this.services, this.stopping.signal);
    } catch (error) {
      console.error(`worker loop: scheduled task '${task.name}' failed`, error);
    }
  }

  private async pollQueue(queue: string, consumer: QueueConsumer): Promise<number> {
    const { queue: port } = this.services.stores;
    const messages = await port.receive(queue, {
      max: BATCH_SIZE,
      visibilityTimeoutSeconds: this.options.visibilityTimeoutSeconds,
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
    // Together: the local queue commits writes in batches, so one round trip settles the whole receive.
    await Promise.all(
      messages.map((message) =>
        failed.has(message.id)
          ? port.release(queue, message.receipt, Math.min(2 ** message.attempts, 60))
          : port.ack(queue, message.receipt),
      ),
    );
    return messages.length;
  }
}

import type { SQSClient } from "@aws-sdk/client-sqs";
import type { ShapeDefinition } from "./definition.ts";
import type { InstancePool } from "./instance-pool.ts";
import type { ShapeResources } from "./resources.ts";
import { type Schedule, startSchedule } from "./schedules.ts";
import { type Delivery, startSqsEventSource } from "./sqs-event-source.ts";

/** Work that does not come through the Router: each queue's event source mapping, and each schedule. */

export interface QueueWorkOptions {
  sqs: SQSClient;
  pools: Map<string, InstancePool>;
  resources: ShapeResources;
  maxPollers: number;
  scheduleEverySeconds?: number;
  log(line: string): void;
  onClose(closer: () => Promise<void> | void): void;
}

export function startQueueWork(
  definition: ShapeDefinition,
  options: QueueWorkOptions,
): { deliveries: Delivery[]; schedules: Map<string, Schedule> } {
  const deliveries: Delivery[] = [];
  for (const subscription of definition.subscriptions) {
    const queue = options.resources.queues.get(subscription.queue)!;
    const pool = options.pools.get(subscription.worker.name)!;
    const source = startSqsEventSource({
      sqs: options.sqs,
      queueName: subscription.queue,
      queueUrl: queue.url,
      queueArn: queue.arn,
      batchSize: subscription.batchSize,
      partialResponses: subscription.partialResponses,
      pollers: Math.min(subscription.maximumConcurrency, options.maxPollers),
      invoke: (event, onInstance) =>
        pool.invoke((instance) => {
          onInstance(instance.id);
          return instance.invoke(event);
        }),
      record: (delivery) => deliveries.push(delivery),
      log: options.log,
    });
    options.onClose(() => source.stop());
  }
  const schedules = new Map<string, Schedule>();
  for (const schedule of definition.schedules) {
    const pool = options.pools.get(schedule.worker.name)!;
    const running = startSchedule({
      name: schedule.name,
      everySeconds: options.scheduleEverySeconds ?? schedule.everySeconds,
      invoke: (event) => pool.invoke((instance) => instance.invoke(event)),
      log: options.log,
    });
    options.onClose(() => running.stop());
    schedules.set(schedule.name, running);
  }
  return { deliveries, schedules };
}

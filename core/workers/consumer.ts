import { consumeBatches } from "../batches/worker.ts";
import { consumeExports } from "../exports/worker.ts";
import type { QueueConsumer } from "./queue-consumer.ts";

export type { QueueConsumer } from "./queue-consumer.ts";

/** Consumers by logical queue name. Later families register theirs here. */
export const QUEUE_CONSUMERS: Partial<Record<string, QueueConsumer>> = {
  exports: consumeExports,
  batches: consumeBatches,
};

import { consumeBatches } from "../features/batches/worker.ts";
import { consumeExports } from "../observe/exports/worker.ts";
import type { QueueConsumer } from "../services.ts";

export type { QueueConsumer } from "../services.ts";

/** Consumers by logical queue name. Later families register theirs here. */
export const QUEUE_CONSUMERS: Partial<Record<string, QueueConsumer>> = {
  exports: consumeExports,
  batches: consumeBatches,
};

import type { Services } from "../services.ts";
import type { QueueMessage } from "../store/ports.ts";

/**
 * A queue consumer: handles a batch and names the messages that failed, so only those are delivered again
 * (SQS partial batch responses on AWS, release in the local worker loop). Must be idempotent: delivery is
 * at-least-once. The consumers are listed in core/workers/consumer.ts.
 */
export type QueueConsumer = (messages: QueueMessage[], services: Services) => Promise<{ failedIds: string[] }>;

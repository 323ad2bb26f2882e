import type { QueueName } from "../../store/ports.ts";
import { createSqsBatchHandler, type SqsHandler } from "./sqs-batch-handler.ts";
import { servicesFromEnv } from "./services-from-env.ts";

/**
 * The Lambda entry point of a queue's worker (functions/workers/<queue>.ts): SQS batches go to the queue's
 * consumer in QUEUE_CONSUMERS, with partial batch failure reporting. Services are built at the first batch.
 */
export function createSqsHandler(queueName: QueueName): SqsHandler {
  return createSqsBatchHandler(queueName, async () => servicesFromEnv());
}

import { deadLetterQueueName, MAX_RECEIVES, QUEUE_NAMES, type QueueName } from "../core/store/ports.ts";
import { componentName } from "./naming.ts";

/**
 * The stores of the AWS platform (see DESIGN.md, "Stores"): one DynamoDB table for Records and Counters,
 * one bucket for Blobs, and one SQS queue with a dead-letter queue per logical queue.
 */

/**
 * Single-table design: pk/sk, secondary index gsi1 (gsi1pk/gsi1sk), expiry in `ttl` (Unix seconds). Its
 * stream (new images) feeds the analytics stream worker (infra/workers.ts): request logs are counted into the
 * analytics aggregates from there, a batch at a time, instead of on the request path.
 */
export const table = new sst.aws.Dynamo("Records", {
  fields: { pk: "string", sk: "string", gsi1pk: "string", gsi1sk: "string" },
  primaryIndex: { hashKey: "pk", rangeKey: "sk" },
  globalIndexes: { gsi1: { hashKey: "gsi1pk", rangeKey: "gsi1sk" } },
  ttl: "ttl",
  stream: "new-image",
});

/** Private: clients download blobs through signed URLs only. */
export const bucket = new sst.aws.Bucket("Blobs");

/**
 * The timeout of each queue's worker (infra/workers.ts). A batch line is one provider call, which may take up to
 * REQUEST_TIMEOUT (5 minutes by default) per attempt, with retries and fallbacks: the batch worker gets Lambda's
 * longest timeout.
 */
export const WORKER_TIMEOUT_SECONDS: Record<QueueName, number> = { exports: 300, batches: 900 };

/**
 * A received message stays hidden for six times its worker's timeout (AWS's advice for SQS event sources;
 * it must be at least the timeout, or the subscription is refused), so a slow batch is not handed to a
 * second worker while the first is still on it.
 */
const visibilityTimeout = (name: QueueName) => `${(6 * WORKER_TIMEOUT_SECONDS[name]) / 60} minutes` as const;

export interface GatewayQueue {
  queue: sst.aws.Queue;
  deadLetters: sst.aws.Queue;
}

/** Per logical queue: the queue and its DLQ, which SQS fills after MAX_RECEIVES failed receives. */
export const queues = Object.fromEntries(
  QUEUE_NAMES.map((name) => {
    const deadLetters = new sst.aws.Queue(componentName(deadLetterQueueName(name)));
    const queue = new sst.aws.Queue(componentName(name), {
      dlq: { queue: deadLetters.arn, retry: MAX_RECEIVES },
      visibilityTimeout: visibilityTimeout(name),
    });
    return [name, { queue, deadLetters }];
  }),
) as Record<QueueName, GatewayQueue>;

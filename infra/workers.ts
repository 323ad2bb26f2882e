import type { QueueName } from "../core/store/ports.ts";
import { gatewayEnvironment, gatewayLinks, gatewayPermissions, NODE_RUNTIME } from "./gateway-runtime.ts";
import { queues, table, WORKER_TIMEOUT_SECONDS } from "./storage.ts";

/**
 * Most worker Lambdas a queue runs at once (the event source's maximum concurrency, at least 2): batch lines are
 * provider calls, so this bounds how hard a big batch presses on providers and on rate limits (10 lines each).
 */
export const QUEUE_WORKER_CONCURRENCY: Record<QueueName, number> = { exports: 2, batches: 10 };

/**
 * One worker Lambda per logical queue (functions/workers/<queue>.ts). With partial batch responses only the
 * messages the consumer reports as failed are delivered again; the queue dead-letters them after
 * MAX_RECEIVES receives.
 */
for (const [name, { queue }] of Object.entries(queues) as [QueueName, (typeof queues)[QueueName]][]) {
  queue.subscribe(
    {
      description: `AI gateway: ${name} queue worker`,
      handler: `functions/workers/${name}.handler`,
      ...NODE_RUNTIME,
      memory: "1024 MB",
      timeout: `${WORKER_TIMEOUT_SECONDS[name]} seconds`,
      link: gatewayLinks,
      permissions: gatewayPermissions,
      environment: gatewayEnvironment,
    },
    {
      batch: { size: 10, partialResponses: true },
      transform: {
        eventSourceMapping: { scalingConfig: { maximumConcurrency: QUEUE_WORKER_CONCURRENCY[name] } },
      },
    },
  );
}

/** How often the scheduled worker runs (EventBridge's shortest rate). */
export const SCHEDULE = "rate(1 minute)";

/**
 * The scheduled worker (functions/workers/scheduled.ts): every task of core/routes/scheduled-tasks.ts once a minute:
 * polling providers' native batches and fine-tuning jobs, expiring and finishing batches.
 */
new sst.aws.Cron("Scheduled", {
  schedule: SCHEDULE,
  function: {
    description: "AI gateway: scheduled tasks (batches, fine-tuning jobs)",
    handler: "functions/workers/scheduled.handler",
    ...NODE_RUNTIME,
    memory: "512 MB",
    timeout: "60 seconds",
    link: gatewayLinks,
    permissions: gatewayPermissions,
    environment: gatewayEnvironment,
  },
});

/**
 * The analytics stream worker (functions/workers/analytics-stream.ts): counts request logs into the
 * analytics aggregates from the table's stream, so the request path writes only the log record. The filter
 * hands it only INSERTs of request-log items (pk `LOG#<id>`, sk `LOG`): counters, index records, logs that
 * expire (REMOVE) never invoke it. A batch writes each distinct counter once, so bigger batches write less
 * per log; the window caps how long a log waits to be counted at low traffic. A batch that cannot finish is
 * reported as a partial batch failure at its first record and delivered again; the worker makes the retry
 * finish the failed attempt without counting anything twice (core/observe/analytics/log-batch.ts). After
 * ANALYTICS_STREAM.retries failed attempts Lambda skips the batch (its logs stay stored; only their analytics
 * are missing).
 */
export const ANALYTICS_STREAM = { batchSize: 100, windowSeconds: 5, retries: 20, timeoutSeconds: 60 } as const;

/** Lambda event filter: INSERTs whose keys are those of a request log. */
export const ANALYTICS_STREAM_FILTER = {
  eventName: ["INSERT"],
  dynamodb: { Keys: { pk: { S: [{ prefix: "LOG#" }] }, sk: { S: ["LOG"] } } },
};

table.subscribe(
  "AnalyticsStream",
  {
    description: "AI gateway: analytics from the request logs (DynamoDB stream)",
    handler: "functions/workers/analytics-stream.handler",
    ...NODE_RUNTIME,
    memory: "512 MB",
    timeout: `${ANALYTICS_STREAM.timeoutSeconds} seconds`,
    // Only the table: the worker reads and writes nothing else (least privilege, and no secrets in its env).
    link: [table],
    environment: { GATEWAY_PLATFORM: "aws", GATEWAY_TABLE: table.name },
  },
  {
    filters: [ANALYTICS_STREAM_FILTER],
    transform: {
      eventSourceMapping: {
        batchSize: ANALYTICS_STREAM.batchSize,
        maximumBatchingWindowInSeconds: ANALYTICS_STREAM.windowSeconds,
        functionResponseTypes: ["ReportBatchItemFailures"],
        // Off: the retry journal is keyed on a batch's first record, so a retry must start from that same record
        // (partial failures are reported instead, and the worker stops writing before its deadline).
        bisectBatchOnFunctionError: false,
        maximumRetryAttempts: ANALYTICS_STREAM.retries,
        startingPosition: "LATEST",
      },
    },
  },
);

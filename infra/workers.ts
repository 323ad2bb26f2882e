import type { QueueName } from "../core/store/ports.ts";
import { gatewayEnvironment, gatewayLinks, NODE_RUNTIME } from "./gateway-runtime.ts";
import { queues, WORKER_TIMEOUT_SECONDS } from "./storage.ts";

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
      timeout: `${WORKER_TIMEOUT_SECONDS} seconds`,
      link: gatewayLinks,
      environment: gatewayEnvironment,
    },
    { batch: { size: 10, partialResponses: true } },
  );
}

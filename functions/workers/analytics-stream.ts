import { createAnalyticsStreamWorker } from "../../core/platform/aws/analytics-stream-handler.ts";

/** Lambda entry point of the analytics stream worker: the table's DynamoDB stream (infra/workers.ts). */
export const handler = createAnalyticsStreamWorker();

import { createScheduledHandler } from "../../core/platform/aws/scheduled-handler.ts";

/** Lambda entry point of the scheduled worker (infra/workers.ts): every scheduled task, once a minute. */
export const handler = createScheduledHandler();

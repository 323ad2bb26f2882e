import { createSqsHandler } from "../../core/platform/aws/sqs-handler.ts";

/** Lambda entry point of the 'batches' queue's worker (infra/workers.ts): batch starts, lines and finalisation. */
export const handler = createSqsHandler("batches");

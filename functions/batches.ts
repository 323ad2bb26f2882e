import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/batches.ts";
import { family } from "../core/routes/table/batches.ts";

/** Lambda entry point of the 'batches' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);

import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/metrics.ts";
import { family } from "../core/routes/table/metrics.ts";

/** Lambda entry point of the 'metrics' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);

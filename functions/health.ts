import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/health.ts";
import { family } from "../core/routes/table/health.ts";

/** Lambda entry point of the 'health' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);

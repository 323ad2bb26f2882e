import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/analytics.ts";
import { family } from "../core/routes/table/analytics.ts";

/** Lambda entry point of the 'analytics' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);

import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/logs.ts";
import { family } from "../core/routes/table/logs.ts";

/** Lambda entry point of the 'logs' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);

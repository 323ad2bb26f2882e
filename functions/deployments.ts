import { createLambdaHandler } from "../core/platform/aws/lambda-handler.ts";
import { handlers } from "../core/routes/handlers/deployments.ts";
import { family } from "../core/routes/table/deployments.ts";

/** Lambda entry point of the 'deployments' route family (infra/api.ts). */
export const handler = createLambdaHandler(family, handlers);
